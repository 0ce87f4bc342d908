//! What `COMMAND INFO`, `COMMAND DOCS` and `COMMAND GETKEYS` report for each
//! command: arity, key specs, summary, complexity and arguments (Redis 7.0+,
//! `RedisModule_SetCommandInfo`), and ACL categories where the server can
//! set them (`RedisModule_SetCommandACLCategories`: Redis 7.2+ and Valkey).
//!
//! The `redis-module` crate's `#[command]` attribute would do this but
//! fails on Redis 7.0, so the raw API is called here. Each command is
//! described once as plain static data ([`Info`]); [`set`] turns it into
//! the C structs at load.
//!
//! Key specs are what cluster clients and proxies read to route a command,
//! what ACL key patterns are checked against, and what `COMMAND GETKEYS`
//! answers with (Redis 7.0 routes RL.ALL through its `getkeys-api`
//! callback instead; see `commands::all`).

use std::ffi::CStr;
use std::mem::size_of;
use std::os::raw::c_int;
use std::ptr::{null, null_mut};

use redis_module::raw::{
    self, RedisModuleCommandArg, RedisModuleCommandHistoryEntry, RedisModuleCommandInfo, RedisModuleCommandInfoVersion,
    RedisModuleCommandKeySpec, RedisModuleCommandKeySpec__bindgen_ty_1,
    RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_1, RedisModuleCommandKeySpec__bindgen_ty_2,
    RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_1, RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_2,
};

use super::ffi::{api, has, Ctx};

/// The module version in which every command first appeared: all of them
/// came with this first release, so the crate version.
/// Releases, for `since`: 0.1.0 had RL.GCRA, RL.TOKENBUCKET, RL.SLIDE,
/// RL.ALL and CL.THROTTLE (and RL.APPLY); the rest came with 0.2.0.
pub const V0_1_0: &CStr = c"0.1.0";
pub const V0_2_0: &CStr = c"0.2.0";

/// How one command is documented.
pub struct Info {
    pub summary: &'static CStr,
    /// The release the command appeared in (`COMMAND DOCS`' `since`).
    pub since: &'static CStr,
    pub complexity: &'static CStr,
    /// As Redis counts it, the command name included; `-N` means at least N.
    pub arity: c_int,
    pub keys: Keys,
    pub args: &'static [Arg],
    /// Space-separated ACL categories, on servers that can set them.
    pub acl_categories: &'static CStr,
}

/// Where a command's keys are, and what it does to them (`REDISMODULE_CMD_KEY_*`).
pub enum Keys {
    /// One key, at argument 1.
    One { flags: u32 },
    /// One key, at argument 2 (`RL.PEEK kind key`).
    Second { flags: u32 },
    /// A count at argument 1, then that many keys.
    Counted { flags: u32 },
    /// No key (`RL.TOP`).
    None,
}

/// One argument (or group of arguments) as `COMMAND DOCS` lists it.
#[derive(Clone, Copy)]
pub struct Arg {
    name: &'static CStr,
    kind: ArgType,
    token: Option<&'static CStr>,
    summary: Option<&'static CStr>,
    flags: u32,
    subargs: &'static [Arg],
}

#[derive(Clone, Copy)]
enum ArgType {
    Key,
    Integer,
    String,
    PureToken,
    OneOf,
    Block,
}

impl Arg {
    const fn new(name: &'static CStr, kind: ArgType) -> Arg {
        Arg { name, kind, token: None, summary: None, flags: raw::REDISMODULE_CMD_ARG_NONE, subargs: &[] }
    }
    const fn key(name: &'static CStr) -> Arg {
        Arg::new(name, ArgType::Key)
    }
    const fn int(name: &'static CStr) -> Arg {
        Arg::new(name, ArgType::Integer)
    }
    const fn string(name: &'static CStr) -> Arg {
        Arg::new(name, ArgType::String)
    }
    /// A bare keyword, such as PEEK.
    const fn flag(name: &'static CStr, token: &'static CStr) -> Arg {
        Arg::new(name, ArgType::PureToken).token(token)
    }
    const fn one_of(name: &'static CStr, subargs: &'static [Arg]) -> Arg {
        Arg { subargs, ..Arg::new(name, ArgType::OneOf) }
    }
    const fn block(name: &'static CStr, subargs: &'static [Arg]) -> Arg {
        Arg { subargs, ..Arg::new(name, ArgType::Block) }
    }
    /// Preceded by a keyword (`BURST n`).
    const fn token(self, token: &'static CStr) -> Arg {
        Arg { token: Some(token), ..self }
    }
    const fn summary(self, summary: &'static CStr) -> Arg {
        Arg { summary: Some(summary), ..self }
    }
    const fn optional(self) -> Arg {
        Arg { flags: self.flags | raw::REDISMODULE_CMD_ARG_OPTIONAL, ..self }
    }
    const fn multiple(self) -> Arg {
        Arg { flags: self.flags | raw::REDISMODULE_CMD_ARG_MULTIPLE, ..self }
    }
}

/// Reads its state and writes it back, and the reply reveals it: as INCR.
const LIMITER_KEY: u32 =
    raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_ACCESS | raw::REDISMODULE_CMD_KEY_UPDATE;

/// `[COST n | REFUND n]`.
const COST: Arg = Arg::one_of(
    c"amount",
    &[
        Arg::int(c"cost").token(c"COST").summary(c"the weight of this request (default 1)"),
        Arg::int(c"refund").token(c"REFUND").summary(c"units to give back (reserve, then settle)"),
    ],
)
.optional();
const PEEK: Arg =
    Arg::flag(c"peek", c"PEEK").optional().summary(c"answer as if consumed, but consume and write nothing");
const MAXWAIT: Arg = Arg::int(c"ms")
    .token(c"MAXWAIT")
    .optional()
    .summary(c"book the earliest start within ms (0 to 1000000) if it does not conform now; the reply adds wait_ms");
const BURST: Arg =
    Arg::int(c"burst").token(c"BURST").optional().summary(c"unit requests admitted back to back (default limit)");

pub static GCRA: Info = Info {
    since: V0_1_0,
    summary: c"Checks and consumes a GCRA rate limit: limit per period_ms, with bursts",
    complexity: c"O(1)",
    arity: -4,
    keys: Keys::One { flags: LIMITER_KEY },
    args: &[Arg::key(c"key"), Arg::int(c"limit"), Arg::int(c"period_ms"), BURST, COST, MAXWAIT, PEEK],
    acl_categories: c"write fast",
};

pub static TOKENBUCKET: Info = Info {
    since: V0_1_0,
    summary: c"Takes tokens from a bucket of capacity tokens refilled at refill_tokens per refill_period_ms",
    complexity: c"O(1)",
    arity: -5,
    keys: Keys::One { flags: LIMITER_KEY },
    args: &[
        Arg::key(c"key"),
        Arg::int(c"capacity"),
        Arg::int(c"refill_tokens"),
        Arg::int(c"refill_period_ms"),
        COST,
        MAXWAIT,
        PEEK,
    ],
    acl_categories: c"write fast",
};

pub static SLIDE: Info = Info {
    since: V0_1_0,
    summary: c"Checks and counts a request against a sliding window of limit per window_ms",
    complexity: c"O(1)",
    arity: -4,
    keys: Keys::One { flags: LIMITER_KEY },
    args: &[Arg::key(c"key"), Arg::int(c"limit"), Arg::int(c"window_ms"), COST, PEEK],
    acl_categories: c"write fast",
};

pub static LOG: Info = Info {
    since: V0_2_0,
    summary: c"Checks and logs a request against an exact sliding log of limit per window_ms",
    complexity: c"O(log N) where N is the number of entries in the log, plus the entries that age out",
    arity: -4,
    keys: Keys::One { flags: LIMITER_KEY },
    args: &[Arg::key(c"key"), Arg::int(c"limit"), Arg::int(c"window_ms"), COST, PEEK],
    acl_categories: c"write fast",
};

pub static QUOTA: Info = Info {
    since: V0_2_0,
    summary: c"Counts requests against a quota of limit per calendar window (in a time zone) or per fixed window",
    complexity: c"O(1)",
    arity: -4,
    keys: Keys::One { flags: LIMITER_KEY },
    args: &[
        Arg::key(c"key"),
        Arg::int(c"limit"),
        Arg::string(c"period").summary(c"HOUR, DAY, WEEK, MONTH or YEAR, or a number of ms for fixed windows"),
        Arg::string(c"zone").token(c"TZ").optional().summary(c"an IANA time zone for calendar windows (default UTC)"),
        COST,
        PEEK,
    ],
    acl_categories: c"write fast",
};

/// RL.ALL's docs. Its spec forms are made from the kinds' own command docs,
/// `(name, keyword, docs)` per kind: one block each, whose arguments are the
/// command's after the key, without PEEK. Built once, at load.
pub fn all(kinds: &[(&'static CStr, &'static CStr, &'static Info)]) -> &'static Info {
    let forms: Vec<Arg> = kinds
        .iter()
        .map(|&(name, keyword, command)| {
            let args: Vec<Arg> = command
                .args
                .iter()
                .filter(|a| {
                    !matches!(a.kind, ArgType::Key)
                        && ![Some(c"PEEK"), Some(c"WAIT"), Some(c"MAXWAIT")].contains(&a.token)
                })
                .copied()
                .collect();
            Arg::block(name, leak(args)).token(keyword)
        })
        .collect();
    let args = vec![
        Arg::int(c"numkeys"),
        Arg::key(c"key").multiple(),
        Arg::one_of(c"spec", leak(forms)).multiple().summary(c"one per key, in key order"),
        MAXWAIT.summary(c"every spec a GCRA or TOKENBUCKET: book one start for every key within ms"),
        PEEK,
    ];
    Box::leak(Box::new(Info {
        since: V0_1_0,
        summary: c"Checks several rate limits as one decision: consumes from every key only if all allow",
        complexity: c"O(N) where N is the number of keys",
        // RL.ALL 1 key SLIDE limit window_ms
        arity: -6,
        keys: Keys::Counted { flags: LIMITER_KEY },
        args: leak(args),
        // Not fast: O(N) in the number of keys.
        acl_categories: c"write slow",
    }))
}

pub static ACQUIRE: Info = Info {
    since: V0_2_0,
    summary: c"Acquires a lease of cost units on a concurrency limit of limit units held at once, for lease_ms",
    complexity: c"O(log N) where N is the number of leases held, plus the expired leases it drops; after a backward clock jump, O(log N) when every lease has one lease_ms, else O(N) until a write repairs the set",
    arity: -4,
    keys: Keys::One { flags: LIMITER_KEY },
    args: &[
        Arg::key(c"key"),
        Arg::int(c"limit"),
        Arg::int(c"lease_ms"),
        Arg::int(c"cost").token(c"COST").optional().summary(c"the units this lease holds (default 1)"),
        Arg::string(c"id")
            .token(c"ID")
            .optional()
            .summary(c"names the lease (1 to 128 bytes): a retried acquire renews it, never takes a second slot"),
        Arg::int(c"timeout_ms")
            .token(c"WAIT")
            .optional()
            .summary(c"wait up to timeout_ms for the lease, first in, first out (1 to 600000)"),
        PEEK,
    ],
    acl_categories: c"write fast",
};

pub static RELEASE: Info = Info {
    since: V0_2_0,
    summary: c"Ends a live lease of a concurrency limit: 1 if it was live, else 0",
    complexity: c"O(log N) where N is the number of leases held, plus the expired leases it drops; after a backward clock jump, O(log N) when every lease has one lease_ms, else O(N) until a write repairs the set",
    arity: 3,
    keys: Keys::One { flags: LIMITER_KEY },
    args: &[Arg::key(c"key"), Arg::string(c"id")],
    acl_categories: c"write fast",
};

pub static RENEW: Info = Info {
    since: V0_2_0,
    summary: c"Extends a live lease of a concurrency limit to lease_ms from now: 1 if it was live, else 0",
    complexity: c"O(log N) where N is the number of leases held, plus the expired leases it drops; after a backward clock jump, O(log N) when every lease has one lease_ms, else O(N) until a write repairs the set",
    arity: 4,
    keys: Keys::One { flags: LIMITER_KEY },
    args: &[Arg::key(c"key"), Arg::string(c"id"), Arg::int(c"lease_ms")],
    acl_categories: c"write fast",
};

/// redis-cell's CL.THROTTLE, with its argument names.
pub static THROTTLE: Info = Info {
    since: V0_1_0,
    summary:
        c"redis-cell compatible: checks and consumes a GCRA limit of count per period seconds, bursts of max_burst + 1",
    complexity: c"O(1)",
    // CL.THROTTLE key max_burst count period [quantity]; more than one
    // quantity is refused by the command itself.
    arity: -5,
    keys: Keys::One { flags: LIMITER_KEY },
    args: &[
        Arg::key(c"key"),
        Arg::int(c"max_burst").summary(c"requests admitted back to back from idle, minus one"),
        Arg::int(c"count"),
        Arg::int(c"period").summary(c"in seconds: count per period is the sustained rate"),
        Arg::int(c"quantity").optional().summary(c"the weight of this request (default 1; 0 reads the state)"),
    ],
    acl_categories: c"write fast",
};

/// Only reads its key, as GET.
const READ_KEY: u32 = raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS;

pub static PEEK_COMMAND: Info = Info {
    since: V0_2_0,
    summary: c"Answers what a limiter command with PEEK would, reading the key only: works where writes are refused",
    complexity: c"As the kind's command: O(1) for the fixed-size kinds, O(log N) for a log or a lease set; for a lease set read after a backward clock jump (or on a replica whose clock is behind its master's), O(log N) when every lease has one lease_ms, else O(N) and O(N log T) for a denial's retry time",
    // At least the kind (the command then says what it lacks: the kind's
    // keywords, or the count); its shortest whole form is
    // RL.PEEK SLIDE key limit window_ms.
    arity: -2,
    keys: Keys::Second { flags: READ_KEY },
    args: &[
        Arg::string(c"kind").summary(c"a limiter keyword, as in RL.ALL's specs"),
        Arg::key(c"key"),
        Arg::string(c"arg").multiple().summary(c"the kind's arguments, as its command takes them, without PEEK"),
    ],
    acl_categories: c"read fast",
};

pub static APPLY: Info = Info {
    since: V0_1_0,
    summary: c"Internal: stores a limiter state propagated from the master or the AOF",
    complexity: c"O(1)",
    arity: 3,
    // Replaces the value whatever it held, as SET or RESTORE.
    keys: Keys::One { flags: raw::REDISMODULE_CMD_KEY_OW | raw::REDISMODULE_CMD_KEY_UPDATE },
    args: &[Arg::key(c"key"), Arg::string(c"payload")],
    acl_categories: c"write fast",
};

/// `RL.TOP`: a container of subcommands, each with its own flags and
/// categories (as `SLOWLOG`), so that reading and resetting can be told
/// apart by ACL rules.
pub static TOP: Info = Info {
    since: V0_2_0,
    summary: c"Who is limited on this node: the keys with the most denied calls or consumed units",
    complexity: c"Depends on subcommand.",
    arity: -2,
    keys: Keys::None,
    args: &[],
    acl_categories: c"slow",
};

/// `[COUNT n]` of RL.TOP DENIED and CONSUMED.
const TOP_COUNT: Arg =
    Arg::int(c"count").token(c"COUNT").optional().summary(c"how many keys, 1 to top-capacity (default 10)");

pub static TOP_DENIED: Info = Info {
    since: V0_2_0,
    summary: c"The node's keys with the most denied calls since the last reset, highest first, with their error",
    complexity: c"O(C log C) where C is top-capacity",
    arity: -2,
    keys: Keys::None,
    args: &[TOP_COUNT],
    acl_categories: c"read slow",
};

pub static TOP_CONSUMED: Info = Info {
    since: V0_2_0,
    summary:
        c"The node's keys with the most consumed units since the last reset (sampled), highest first, with their error",
    complexity: c"O(C log C) where C is top-capacity",
    arity: -2,
    keys: Keys::None,
    args: &[TOP_COUNT],
    acl_categories: c"read slow",
};

/// An admin action, as SLOWLOG RESET: the same categories, and in a
/// cluster it is meant for every node.
pub static TOP_RESET: Info = Info {
    since: V0_2_0,
    summary: c"Empties both RL.TOP lists of this node",
    complexity: c"O(C) where C is top-capacity",
    arity: 2,
    keys: Keys::None,
    args: &[],
    acl_categories: c"admin slow dangerous",
};

/// SLOWLOG RESET's tips.
pub const TOP_RESET_TIPS: &CStr = c"request_policy:all_nodes response_policy:all_succeeded";

pub static TOP_HELP: Info = Info {
    since: V0_2_0,
    summary: c"Shows RL.TOP's subcommands",
    complexity: c"O(1)",
    arity: 2,
    keys: Keys::None,
    args: &[],
    acl_categories: c"slow",
};

/// The layout of the structs below, so the server can index arrays of them
/// whatever version of the header it was built with (the C header's
/// `REDISMODULE_COMMAND_INFO_VERSION`, which is a `static` there and so not
/// linkable).
static VERSION: RedisModuleCommandInfoVersion = RedisModuleCommandInfoVersion {
    version: 1,
    sizeof_historyentry: size_of::<RedisModuleCommandHistoryEntry>(),
    sizeof_keyspec: size_of::<RedisModuleCommandKeySpec>(),
    sizeof_arg: size_of::<RedisModuleCommandArg>(),
};

/// Documents the already created command `name`. Does nothing on a server
/// without `RedisModule_SetCommandInfo` (its keys are then found from
/// first/last/step and, for RL.ALL, the getkeys-api callback).
pub fn set(ctx: Ctx<'_>, name: &CStr, info: &Info) -> Result<(), &'static str> {
    set_with_tips(ctx, name, info, None)
}

/// [`set`], with the command tips `COMMAND INFO` shows (space-separated,
/// such as `request_policy:all_nodes`). `name` may be `container|subcommand`.
pub fn set_with_tips(ctx: Ctx<'_>, name: &CStr, info: &Info, tips: Option<&'static CStr>) -> Result<(), &'static str> {
    if !has!(RedisModule_GetCommand) || !has!(RedisModule_SetCommandInfo) {
        return Ok(());
    }
    // SAFETY: the load's context; `name` is a C string (checked `has!` above).
    let command = unsafe { api!(RedisModule_GetCommand(ctx.raw(), name.as_ptr())) };
    if command.is_null() {
        return Err("RedisModule_GetCommand did not find it");
    }
    // Redis copies everything it is given; the arrays are leaked anyway,
    // once per load, so no server could ever see them freed. (A module
    // with data types can never be unloaded, so this is not a leak per
    // MODULE LOAD/UNLOAD cycle.)
    let key_specs = match &info.keys {
        Keys::None => leak(vec![END_OF_KEY_SPECS]),
        keys => leak(vec![key_spec(keys), END_OF_KEY_SPECS]),
    };
    let c_info = RedisModuleCommandInfo {
        version: &VERSION,
        summary: info.summary.as_ptr(),
        complexity: info.complexity.as_ptr(),
        since: info.since.as_ptr(),
        history: null_mut(),
        tips: tips.map_or(null(), CStr::as_ptr),
        arity: info.arity,
        key_specs: key_specs.as_mut_ptr(),
        args: c_args(info.args),
    };
    // SAFETY: `command` is the server's (non-NULL, checked above); `c_info` and what
    // it points to live until the call returns (the server copies them).
    if unsafe { api!(RedisModule_SetCommandInfo(command, &c_info)) } != raw::REDISMODULE_OK as c_int {
        return Err("RedisModule_SetCommandInfo refused it (the server log says why)");
    }
    if has!(RedisModule_SetCommandACLCategories)
        // SAFETY: `command` is the server's; the categories are a static C string
        // (checked `has!`).
        && unsafe { api!(RedisModule_SetCommandACLCategories(command, info.acl_categories.as_ptr())) }
            != raw::REDISMODULE_OK as c_int
    {
        return Err("RedisModule_SetCommandACLCategories refused its categories");
    }
    Ok(())
}

fn leak<T>(v: Vec<T>) -> &'static mut [T] {
    Box::leak(v.into_boxed_slice())
}

fn key_spec(keys: &Keys) -> RedisModuleCommandKeySpec {
    // Every form but `Second` begins the search at argument 1.
    let pos = if matches!(keys, Keys::Second { .. }) { 2 } else { 1 };
    let bs = RedisModuleCommandKeySpec__bindgen_ty_1 {
        index: RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_1 { pos },
    };
    match *keys {
        Keys::One { flags } | Keys::Second { flags } => RedisModuleCommandKeySpec {
            notes: null(),
            flags: u64::from(flags),
            begin_search_type: raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX,
            bs,
            find_keys_type: raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE,
            // Just the key at the begin-search index.
            fk: RedisModuleCommandKeySpec__bindgen_ty_2 {
                range: RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_1 { lastkey: 0, keystep: 1, limit: 0 },
            },
        },
        Keys::None => END_OF_KEY_SPECS,
        Keys::Counted { flags } => RedisModuleCommandKeySpec {
            notes: null(),
            flags: u64::from(flags),
            begin_search_type: raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX,
            bs,
            find_keys_type: raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_KEYNUM,
            // The count is at the begin-search index, the keys right after it.
            fk: RedisModuleCommandKeySpec__bindgen_ty_2 {
                keynum: RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_2 { keynumidx: 0, firstkey: 1, keystep: 1 },
            },
        },
    }
}

/// Ends the key-spec array (a zero `begin_search_type`).
const END_OF_KEY_SPECS: RedisModuleCommandKeySpec = RedisModuleCommandKeySpec {
    notes: null(),
    flags: 0,
    begin_search_type: raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INVALID,
    bs: RedisModuleCommandKeySpec__bindgen_ty_1 {
        index: RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_1 { pos: 0 },
    },
    find_keys_type: raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_OMITTED,
    fk: RedisModuleCommandKeySpec__bindgen_ty_2 {
        range: RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_1 { lastkey: 0, keystep: 0, limit: 0 },
    },
};

/// Ends an argument array (a NULL `name`).
const END_OF_ARGS: RedisModuleCommandArg = RedisModuleCommandArg {
    name: null(),
    type_: 0,
    key_spec_index: 0,
    token: null(),
    summary: null(),
    since: null(),
    flags: 0,
    deprecated_since: null(),
    subargs: null_mut(),
    display_text: null(),
};

/// The C array for `args` (and, recursively, their subarguments), or NULL
/// for none.
fn c_args(args: &[Arg]) -> *mut RedisModuleCommandArg {
    if args.is_empty() {
        return null_mut();
    }
    let mut out: Vec<RedisModuleCommandArg> = args.iter().map(c_arg).collect();
    out.push(END_OF_ARGS);
    leak(out).as_mut_ptr()
}

fn c_arg(arg: &Arg) -> RedisModuleCommandArg {
    let type_ = match arg.kind {
        ArgType::Key => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
        ArgType::Integer => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
        ArgType::String => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
        ArgType::PureToken => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_PURE_TOKEN,
        ArgType::OneOf => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_ONEOF,
        ArgType::Block => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_BLOCK,
    };
    RedisModuleCommandArg {
        name: arg.name.as_ptr(),
        type_,
        // Every command has one key spec, index 0; -1 marks "not a key".
        key_spec_index: if matches!(arg.kind, ArgType::Key) { 0 } else { -1 },
        token: arg.token.map_or(null(), CStr::as_ptr),
        summary: arg.summary.map_or(null(), CStr::as_ptr),
        since: null(),
        flags: arg.flags as c_int,
        deprecated_since: null(),
        subargs: c_args(arg.subargs),
        display_text: null(),
    }
}
