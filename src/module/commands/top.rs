//! `RL.TOP DENIED|CONSUMED [COUNT n]` and `RL.TOP RESET`: the node's keys
//! with the most denied calls, or the most consumed units, since the last
//! reset, as `[key, count, error]` triples, highest first, ties by key (see
//! `module::top` for how they are counted, and the README for the error).

use crate::core::heavy_hitters::Hitter;
use crate::module::args::{self, printable, ArgError};
use crate::module::ffi::{api, reply_array, reply_error, reply_i64, reply_ok, reply_wrong_arity, Argv, Ctx};
use crate::module::top::{self, Board};

/// COUNT when not given.
const DEFAULT_COUNT: u64 = 10;

/// What a shortened key (one longer than a slot holds) ends with in the reply.
pub const SHORTENED: &[u8] = b"...";

pub const OFF: &str = "ERR RL.TOP is off: the module was loaded with top-capacity 0";

pub fn command(ctx: Ctx<'_>, args: Argv<'_>) {
    if args.len() < 2 {
        return reply_wrong_arity(ctx);
    }
    let word = args.bytes(1);
    let board = if word.eq_ignore_ascii_case(b"DENIED") {
        Board::Denied
    } else if word.eq_ignore_ascii_case(b"CONSUMED") {
        Board::Consumed
    } else if word.eq_ignore_ascii_case(b"RESET") {
        if args.len() != 2 {
            return reply_error(ctx, "ERR syntax error: RL.TOP RESET takes no argument");
        }
        return if top::reset() { reply_ok(ctx) } else { reply_error(ctx, OFF) };
    } else {
        let name = printable(word).map(|w| format!(" '{w}'")).unwrap_or_default();
        return reply_error(
            ctx,
            &format!("ERR syntax error: unknown RL.TOP subcommand{name} (expected DENIED, CONSUMED or RESET)"),
        );
    };
    let capacity = top::capacity();
    if capacity == 0 {
        return reply_error(ctx, OFF);
    }
    let count = match parse_count(&args, capacity as u64) {
        Ok(n) => n,
        Err(e) => return reply_error(ctx, &e.to_string()),
    };
    let Some(hitters) = top::top(board, count as usize) else {
        return reply_error(ctx, OFF);
    };
    reply(ctx, &hitters);
}

/// `[COUNT n]` after the subcommand: 1 to `capacity`, default 10 (or less).
fn parse_count(args: &Argv<'_>, capacity: u64) -> Result<u64, ArgError> {
    match args.len() {
        2 => Ok(DEFAULT_COUNT.min(capacity)),
        4 if args.bytes(2).eq_ignore_ascii_case(b"COUNT") => args::int_in(args.bytes(3), "COUNT", 1, capacity),
        3 if args.bytes(2).eq_ignore_ascii_case(b"COUNT") => Err(ArgError::MissingValue("COUNT")),
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
        api!(RedisModule_ReplyWithStringBuffer(ctx.raw(), key.as_ptr().cast(), key.len()));
        reply_i64(ctx, i64::try_from(h.count).unwrap_or(i64::MAX));
        reply_i64(ctx, i64::try_from(h.error).unwrap_or(i64::MAX));
    }
}
