//! What `COMMAND INFO`, `COMMAND DOCS` and `COMMAND GETKEYS` report for each
//! command: arity, key specs, summary, complexity and arguments (Redis 7.0+,
//! `RedisModule_SetCommandInfo`), and ACL categories where the server can
//! set them (`RedisModule_SetCommandACLCategories`: Redis 7.2+ and Valkey).
//!
//! The `redis-module` crate's `#[command]` attribute would do this but
//! fails on Redis 7.0, so the raw API is called here. Each command is
//! described once as plain static data ([`Info`]), in its declaration
//! (`declaration`; a kind's in its `Kind` impl), from the builders and the
//! shared arguments here; [`set`] turns it into the C structs at load.
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

/// The releases, for `since` (the one a command first appeared in): 0.1.0
/// had RL.GCRA, RL.TOKENBUCKET, RL.SLIDE, RL.ALL and CL.THROTTLE (and
/// RL.APPLY); the rest came with 0.2.0.
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
    /// The command tips `COMMAND INFO` shows (space-separated, such as
    /// `request_policy:all_nodes`).
    pub tips: Option<&'static CStr>,
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

impl Keys {
    /// `COMMAND`'s legacy first/last/step, which follow from the key spec:
    /// a key at a fixed index is that index; keys after a count (RL.ALL)
    /// cannot be said this way (the server asks the command:
    /// `getkeys-api`), nor can no key.
    pub fn legacy_positions(&self) -> (c_int, c_int, c_int) {
        match self {
            Keys::One { .. } => (1, 1, 1),
            Keys::Second { .. } => (2, 2, 1),
            Keys::Counted { .. } | Keys::None => (0, 0, 0),
        }
    }
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

/// What an [`Arg`] is (`REDISMODULE_ARG_TYPE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgType {
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
    pub const fn key(name: &'static CStr) -> Arg {
        Arg::new(name, ArgType::Key)
    }
    pub const fn int(name: &'static CStr) -> Arg {
        Arg::new(name, ArgType::Integer)
    }
    pub const fn string(name: &'static CStr) -> Arg {
        Arg::new(name, ArgType::String)
    }
    /// A bare keyword, such as PEEK.
    pub const fn flag(name: &'static CStr, token: &'static CStr) -> Arg {
        Arg::new(name, ArgType::PureToken).token(token)
    }
    pub const fn one_of(name: &'static CStr, subargs: &'static [Arg]) -> Arg {
        Arg { subargs, ..Arg::new(name, ArgType::OneOf) }
    }
    pub const fn block(name: &'static CStr, subargs: &'static [Arg]) -> Arg {
        Arg { subargs, ..Arg::new(name, ArgType::Block) }
    }
    /// Preceded by a keyword (`BURST n`).
    pub const fn token(self, token: &'static CStr) -> Arg {
        Arg { token: Some(token), ..self }
    }
    pub const fn summary(self, summary: &'static CStr) -> Arg {
        Arg { summary: Some(summary), ..self }
    }
    pub const fn optional(self) -> Arg {
        Arg { flags: self.flags | raw::REDISMODULE_CMD_ARG_OPTIONAL, ..self }
    }
    pub const fn multiple(self) -> Arg {
        Arg { flags: self.flags | raw::REDISMODULE_CMD_ARG_MULTIPLE, ..self }
    }
}

/// What the docs say of an argument, for the tests that hold them against
/// the parsers (`grammar_docs`).
#[cfg(test)]
impl Arg {
    pub fn name(&self) -> &'static CStr {
        self.name
    }
    pub fn kind(&self) -> ArgType {
        self.kind
    }
    /// The keyword before it, or that it is (a pure token).
    pub fn keyword(&self) -> Option<&'static CStr> {
        self.token
    }
    pub fn is_optional(&self) -> bool {
        self.flags & raw::REDISMODULE_CMD_ARG_OPTIONAL != 0
    }
    pub fn is_multiple(&self) -> bool {
        self.flags & raw::REDISMODULE_CMD_ARG_MULTIPLE != 0
    }
    /// A one-of's alternatives, a block's parts.
    pub fn subargs(&self) -> &'static [Arg] {
        self.subargs
    }
}

/// Reads its state and writes it back, and the reply reveals it: as INCR.
pub const LIMITER_KEY: u32 =
    raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_ACCESS | raw::REDISMODULE_CMD_KEY_UPDATE;

/// Only reads its key, as GET.
pub const READ_KEY: u32 = raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS;

/// `[COST n | REFUND n]`.
pub const COST: Arg = Arg::one_of(
    c"amount",
    &[
        Arg::int(c"cost").token(c"COST").summary(c"the weight of this request (default 1)"),
        Arg::int(c"refund").token(c"REFUND").summary(c"units to give back (reserve, then settle)"),
    ],
)
.optional();
pub const PEEK: Arg =
    Arg::flag(c"peek", c"PEEK").optional().summary(c"answer as if consumed, but consume and write nothing");
pub const MAXWAIT: Arg = Arg::int(c"ms")
    .token(c"MAXWAIT")
    .optional()
    .summary(c"book the earliest start within ms (0 to 1000000) if it does not conform now; the reply adds wait_ms");
pub const BURST: Arg =
    Arg::int(c"burst").token(c"BURST").optional().summary(c"unit requests admitted back to back (default limit)");

/// The cost of a call on a lease set (RL.ACQUIRE, RL.RELEASE, RL.RENEW).
pub const LEASE_COMPLEXITY: &CStr = c"O(log N) where N is the number of leases held, plus the expired leases it drops; after a backward clock jump too: O(log N) reads, and the call that repairs the set moves every deadline back in O(1)";

/// RL.ALL's docs. Its spec forms are made from the kinds' own command docs,
/// `(name, keyword, docs)` per kind: one block each, whose arguments are the
/// command's after the key, without PEEK. Built once, at load.
pub fn all(kinds: &[(&'static CStr, &'static CStr, &'static Info)]) -> &'static Info {
    let forms: Vec<Arg> = kinds
        .iter()
        .map(|&(name, keyword, command)| {
            let args: Vec<Arg> = command.args.iter().filter(|a| in_spec(a)).copied().collect();
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
        tips: None,
    }))
}

/// Whether a kind's command argument is one of its RL.ALL spec's too: all
/// but the key, PEEK (RL.ALL's own, last), WAIT (RL.ALL does not wait) and
/// MAXWAIT (RL.ALL's own, after the specs).
pub fn in_spec(arg: &Arg) -> bool {
    !matches!(arg.kind, ArgType::Key) && ![Some(c"PEEK"), Some(c"WAIT"), Some(c"MAXWAIT")].contains(&arg.token)
}
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

/// Documents the already created command `name` (which may be
/// `container|subcommand`). Does nothing on a server without
/// `RedisModule_SetCommandInfo` (its keys are then found from
/// first/last/step and, for RL.ALL, the getkeys-api callback).
///
/// Never inlined: its frame names the arrays it leaks on purpose, once per
/// load, which `scripts/memcheck.supp` suppresses by this file's name
/// (inlined into its caller, valgrind reported them as definite leaks, and
/// a fork child that exits with valgrind's error status fails every AOF
/// rewrite).
#[inline(never)]
pub fn set(ctx: Ctx<'_>, name: &CStr, info: &Info) -> Result<(), &'static str> {
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
        tips: info.tips.map_or(null(), CStr::as_ptr),
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
