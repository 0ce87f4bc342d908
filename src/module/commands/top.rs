//! `RL.TOP DENIED|CONSUMED [COUNT n]`, `RL.TOP RESET` and `RL.TOP HELP`:
//! the node's keys with the most denied calls, or the most consumed units,
//! since the last reset, as `[key, count, error]` triples, highest first,
//! ties by key (see `module::top_summary` for how they are counted, and the README
//! for the error).
//!
//! Each is a subcommand of the container `RL.TOP`, with its own flags, as
//! `SLOWLOG GET` and `SLOWLOG RESET` are: reading is harmless (`readonly`),
//! resetting is an admin action (`admin`, `@admin @dangerous`), so ACL
//! rules can tell them apart. The server answers an unknown subcommand
//! itself ("unknown subcommand ... Try RL.TOP HELP.") and checks each one's
//! arity.

use crate::heavy_hitters::Hitter;
use crate::module::args::{self, printable, ArgError};
use crate::module::command_info::{Arg, Info, Keys, V0_2_0};
use crate::module::declaration::{Declaration, Docs};
use crate::module::entry::entry_point;
use crate::module::ffi::{api, reply_array, reply_error, reply_i64, reply_ok, Argv, Ctx};
use crate::module::top_summary::{self as top, Board};

/// `RL.TOP`: a container (no handler, no flags of its own) whose
/// subcommands carry their own flags and categories, as SLOWLOG's do, so
/// ACL rules can tell reading from resetting: reading the board touches no
/// key and runs anywhere, RESET is an admin action. None is `fast` (DENIED
/// and CONSUMED sort up to top-capacity entries).
pub const COMMAND: Declaration = Declaration::container(
    c"RL.TOP",
    &Info {
        since: V0_2_0,
        summary: c"Who is limited on this node: the keys with the most denied calls or consumed units",
        complexity: c"Depends on subcommand.",
        arity: -2,
        keys: Keys::None,
        args: &[],
        acl_categories: c"slow",
        tips: None,
    },
    &[
        Declaration::command(c"DENIED", READ, entry_point!(denied), Docs::Fixed(&DENIED)),
        Declaration::command(c"CONSUMED", READ, entry_point!(consumed), Docs::Fixed(&CONSUMED)),
        Declaration::command(c"RESET", c"admin allow-loading allow-stale", entry_point!(reset), Docs::Fixed(&RESET)),
        Declaration::command(c"HELP", c"allow-loading allow-stale", entry_point!(help), Docs::Fixed(&HELP)),
    ],
);

/// The flags of DENIED and CONSUMED.
const READ: &std::ffi::CStr = c"readonly allow-loading allow-stale";

/// `[COUNT n]` of RL.TOP DENIED and CONSUMED.
const COUNT: Arg =
    Arg::int(c"count").token(c"COUNT").optional().summary(c"how many keys, 1 to top-capacity (default 10)");

const DENIED: Info = Info {
    since: V0_2_0,
    summary: c"The node's keys with the most denied calls since the last reset, highest first, with their error",
    complexity: c"O(C log C) where C is top-capacity",
    arity: -2,
    keys: Keys::None,
    args: &[COUNT],
    acl_categories: c"read slow",
    tips: None,
};

const CONSUMED: Info = Info {
    since: V0_2_0,
    summary:
        c"The node's keys with the most consumed units since the last reset (sampled), highest first, with their error",
    complexity: c"O(C log C) where C is top-capacity",
    arity: -2,
    keys: Keys::None,
    args: &[COUNT],
    acl_categories: c"read slow",
    tips: None,
};

/// An admin action, as SLOWLOG RESET: the same categories and tips (in a
/// cluster it is meant for every node).
const RESET: Info = Info {
    since: V0_2_0,
    summary: c"Empties both RL.TOP lists of this node",
    complexity: c"O(C) where C is top-capacity",
    arity: 2,
    keys: Keys::None,
    args: &[],
    acl_categories: c"admin slow dangerous",
    tips: Some(c"request_policy:all_nodes response_policy:all_succeeded"),
};

const HELP: Info = Info {
    since: V0_2_0,
    summary: c"Shows RL.TOP's subcommands",
    complexity: c"O(1)",
    arity: 2,
    keys: Keys::None,
    args: &[],
    acl_categories: c"slow",
    tips: None,
};

/// COUNT when not given.
const DEFAULT_COUNT: u64 = 10;

/// What a shortened key (one longer than a slot holds) ends with in the reply.
pub const SHORTENED: &[u8] = b"...";

pub const OFF: &str = "ERR RL.TOP is off: the module was loaded with top-capacity 0";

/// `RL.TOP DENIED [COUNT n]`
pub fn denied(ctx: Ctx<'_>, args: Argv<'_>) {
    board(ctx, &args, Board::Denied);
}

/// `RL.TOP CONSUMED [COUNT n]`
pub fn consumed(ctx: Ctx<'_>, args: Argv<'_>) {
    board(ctx, &args, Board::Consumed);
}

/// `RL.TOP RESET` (the server has checked that nothing follows).
pub fn reset(ctx: Ctx<'_>, _args: Argv<'_>) {
    if top::reset() {
        reply_ok(ctx)
    } else {
        reply_error(ctx, OFF)
    }
}

/// `RL.TOP HELP`: one status line each, as `SLOWLOG HELP` answers.
pub fn help(ctx: Ctx<'_>, _args: Argv<'_>) {
    const LINES: [&std::ffi::CStr; 9] = [
        c"RL.TOP <subcommand> [<arg> [value] ...]. Subcommands are:",
        c"DENIED [COUNT <count>]",
        c"    The keys with the most denied calls since the last reset, highest first, as [key, count, error].",
        c"CONSUMED [COUNT <count>]",
        c"    The keys with the most consumed units since the last reset (sampled: see docs/commands/RL.TOP.md), likewise.",
        c"RESET",
        c"    Empty both lists (an admin command, as SLOWLOG RESET).",
        c"HELP",
        c"    Print this help.",
    ];
    reply_array(ctx, LINES.len());
    for line in LINES {
        // SAFETY: the command's context (a `Ctx`); the buffer is live for the call, its
        // length passed with it.
        unsafe { api!(RedisModule_ReplyWithSimpleString(ctx.raw(), line.as_ptr())) };
    }
}

fn board(ctx: Ctx<'_>, args: &Argv<'_>, board: Board) {
    let capacity = top::capacity();
    if capacity == 0 {
        return reply_error(ctx, OFF);
    }
    let count = match parse_count(args, capacity as u64) {
        Ok(n) => n,
        Err(e) => return reply_error(ctx, &e.to_string()),
    };
    let Some(hitters) = top::top(board, count as usize) else {
        return reply_error(ctx, OFF);
    };
    reply(ctx, &hitters);
}

/// `[COUNT n]` after the subcommand: 1 to `capacity`, default 10 (or less).
pub(crate) fn parse_count(args: &Argv<'_>, capacity: u64) -> Result<u64, ArgError> {
    match args.len() {
        2 => Ok(DEFAULT_COUNT.min(capacity)),
        4 if args.bytes(2).eq_ignore_ascii_case(b"COUNT") => args::int_in(args.bytes(3), "COUNT", 1, capacity),
        3 if args.bytes(2).eq_ignore_ascii_case(b"COUNT") => Err(ArgError::MissingValue("COUNT")),
        // `COUNT n` and more: the word after its value is what is unknown.
        n if n > 4 && args.bytes(2).eq_ignore_ascii_case(b"COUNT") => {
            Err(ArgError::UnknownOption(printable(args.bytes(4))))
        }
        _ => Err(ArgError::UnknownOption(printable(args.bytes(2)))),
    }
}

fn reply(ctx: Ctx<'_>, hitters: &[Hitter]) {
    reply_array(ctx, hitters.len());
    for h in hitters {
        reply_array(ctx, 3);
        let mut key = h.key.clone();
        if h.shortened {
            key.extend_from_slice(SHORTENED);
        }
        // SAFETY: the command's context (a `Ctx`); the buffer is live for the call, its
        // length passed with it.
        unsafe { api!(RedisModule_ReplyWithStringBuffer(ctx.raw(), key.as_ptr().cast(), key.len())) };
        reply_i64(ctx, i64::try_from(h.count).unwrap_or(i64::MAX));
        reply_i64(ctx, i64::try_from(h.error).unwrap_or(i64::MAX));
    }
}
