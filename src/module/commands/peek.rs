//! `RL.PEEK kind key args...`: the read-only form of every kind, for where
//! writes are refused (read-only replicas, `EVAL_RO` and `no-writes`
//! scripts, users with read-only key permissions, OOM). It answers exactly
//! what the kind's command with `PEEK` answers, opens the key for reading
//! only, and never writes, not even a repair. Flagged `readonly`.

use crate::module::args::{printable, ArgError, Cursor, Options};
use crate::module::clock;
use crate::module::command_info::{Arg, Info, Keys, READ_KEY, V0_2_0};
use crate::module::declaration::{Declaration, Docs};
use crate::module::entry::entry_point;
use crate::module::ffi::{context_flags, reply_error, reply_wrong_arity, Argv, Ctx};
use crate::module::kinds::{self, Kind, WithKind};
use crate::module::part::{self, Ask, Member, Part};
use crate::module::reply;
use crate::module::state::KeyState;

/// Not `write`, not `deny-oom`: it runs on read-only replicas, in
/// read-only scripts and under OOM. Counted as a call of the kind (no line
/// of its own).
pub const COMMAND: Declaration =
    Declaration::command(c"RL.PEEK", c"readonly fast", entry_point!(command), Docs::Fixed(&DOCS));

const DOCS: Info = Info {
    since: V0_2_0,
    summary: c"Answers what a limiter command with PEEK would, reading the key only: works where writes are refused",
    complexity: c"As the kind's command: O(1) for the fixed-size kinds, O(log N) for a log or a lease set; also for a lease set read after a backward clock jump or on a replica whose clock is behind its master's",
    // At least the kind (the command then says what it lacks: the kind's
    // keywords, or the count); its shortest whole form is
    // RL.PEEK SLIDE key limit window_ms.
    arity: -2,
    keys: Keys::Second { flags: READ_KEY },
    args: &[
        Arg::string(c"kind").summary(c"a limiter keyword, as in RL.ALL's specs"),
        Arg::key(c"key"),
        Arg::string(c"arg").multiple().summary(c"the kind's arguments, as its command takes them, without PEEK, REFUND or WAIT"),
    ],
    acl_categories: c"read fast",
    tips: None,
};

pub fn command(ctx: Ctx<'_>, args: Argv<'_>) {
    if args.len() < 2 {
        return reply_wrong_arity(ctx);
    }
    // The kind first, so a call that forgot it (`RL.PEEK user 10 1000`)
    // is told which keywords there are, not only that the count is wrong.
    let word = args.bytes(1);
    if !kinds::is_keyword(word) {
        let e = ArgError::UnknownLimiter(printable(word), kinds::expected());
        return reply_error(ctx, &format!("{e}: RL.PEEK takes the kind first, as in RL.PEEK GCRA key limit period_ms"));
    }
    if args.len() < 3 {
        return reply_wrong_arity(ctx);
    }
    let _ = kinds::by_keyword(word, Peek { ctx, args });
}

/// The arguments after the key (`args[2]`): the kind's grammar, without
/// PEEK (it is implied) or REFUND (a write), and WAIT is refused.
pub fn parse_from<'a, K: Kind>(len: usize, arg: impl Fn(usize) -> &'a [u8]) -> Result<(K, Options), ArgError> {
    K::grammar(&mut Cursor::command(len, arg, 3, K::POSITIONALS, false)?)
}

/// Peeks at a key of the kind the keyword named.
struct Peek<'c> {
    ctx: Ctx<'c>,
    args: Argv<'c>,
}

impl WithKind for Peek<'_> {
    type Out = ();
    fn run<K: Kind>(self) {
        let Peek { ctx, args } = self;
        // Counted as a call of the kind, as its command with PEEK is.
        let mut tally = K::stats().tally();
        let (limiter, opts) = match parse_from::<K>(args.len(), |i| args.bytes(i)) {
            Ok(parsed) => parsed,
            Err(ArgError::WrongArity) => return reply_wrong_arity(ctx),
            Err(e) => return reply_error(ctx, &e.to_string()),
        };
        // The kind's command with PEEK, as a transaction of one part opened
        // for reading: its commit stores nothing, and closes the key.
        let state = match KeyState::<K>::open_read(ctx, args.key(2)) {
            Ok(state) => state,
            Err(wrong_type) => return reply_error(ctx, &wrong_type.message::<K>()),
        };
        let (now, ask) = (clock::now(), Ask { peek: true, ..super::ask(&opts) });
        let mut part = Part::<K>::decided(ctx, state, args.bytes(2), &limiter, ask, now);
        let allowed = part.decision().allowed;
        let flags = context_flags(ctx);
        // A PEEK's commit cannot refuse a value: it stores none.
        let _ = part::commit(std::slice::from_mut(&mut part), allowed, now, flags, true, |_| args.bytes(2));
        tally.decision(part.decision());
        // Nothing is written: a lease is nil.
        part.reply(ctx, opts.max_wait_ms.is_some(), reply::wants_map(flags));
    }
}
