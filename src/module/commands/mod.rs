//! The limiter commands. Each one is: parse -> read the key -> decide in the
//! pure core -> (if it changed the state) write, expire, signal, notify,
//! propagate -> reply, through the one key-state path (`state`). Nothing is
//! read or written before the arguments are valid, and nothing is written
//! or propagated for a denial, a PEEK or COST 0, except a repair (a refund,
//! `REFUND n`, is a write like a consuming call): a stored
//! state further ahead than the parameters allow (a backward clock jump, a
//! tightened limit) is stored as drained by the first call that sees it,
//! other than a PEEK (see the core).

pub mod all;
pub mod all_args;
pub mod apply;
pub mod peek;
pub mod release_renew;
pub mod throttle;
pub mod top;
pub mod wait;

use crate::core::time::NS_PER_MS;
use crate::core::{Algorithm, Change, Decision};

use super::args::{ArgError, Options};
use super::clock;
use super::declaration::{Declaration, Docs};
use super::entry;
use super::ffi::{context_flags, reply_error, reply_wrong_arity, Argv, Ctx};
use super::kinds::Kind;
use super::part::{self, Ask, Member, Part};
use super::reply;
use super::state::NOT_STORED;
use super::stats::Counters;

/// Every command that is not one kind's own, in the order they are
/// registered (after the kinds') and their lines appear in `INFO rl`.
pub const TABLE: &[Declaration] = &[
    all::COMMAND,
    throttle::COMMAND,
    apply::COMMAND,
    release_renew::RELEASE,
    release_renew::RENEW,
    peek::COMMAND,
    top::COMMAND,
];

/// A kind's own command's declaration, from its `Kind` impl: its name, its
/// docs, its counters and INFO line.
pub fn of_kind<K: Kind>() -> Declaration {
    Declaration::command(K::COMMAND, c"write deny-oom fast", kind_entry_point::<K>, Docs::Fixed(K::DOCS))
        .info_line(K::INFO_NAME, K::stats())
}

unsafe extern "C" fn kind_entry_point<K: Kind>(
    ctx: *mut redis_module::raw::RedisModuleCtx,
    argv: *mut *mut redis_module::raw::RedisModuleString,
    argc: std::os::raw::c_int,
) -> std::os::raw::c_int {
    // SAFETY: the server's own arguments for this call.
    unsafe { entry::command(ctx, argv, argc, kind_command::<K>) }
}

/// A kind's own command, `RL.<KEYWORD> key <grammar> [PEEK]`.
pub fn kind_command<K: Kind>(ctx: Ctx<'_>, args: Argv<'_>) {
    kind_command_with::<K>(ctx, args, K::parse_command);
}

/// A kind's own command with its arguments read by `parse` (RL.ACQUIRE's
/// waits read them without `WAIT`, or against the key's latest limit),
/// answered as the kind's command answers.
pub fn kind_command_with<K: Kind>(
    ctx: Ctx<'_>,
    args: Argv<'_>,
    parse: impl FnOnce(&Argv<'_>) -> Result<(K, Options), ArgError>,
) {
    run::<K, K>(ctx, args, K::stats(), parse, |ctx, decision, written, opts, flags| {
        reply::kind::<K>(ctx, decision, written, opts.max_wait_ms.is_some(), reply::wants_map(flags))
    });
}

/// What a call with `opts` asks of its key.
#[inline]
pub fn ask(opts: &Options) -> Ask {
    // MAXWAIT is at most 10^6 ms: fits in ns.
    Ask {
        cost: opts.cost,
        refund: opts.refund,
        max_wait_ns: opts.max_wait_ms.map(|ms| ms * NS_PER_MS),
        peek: opts.peek,
    }
}

/// Runs one single-key command end to end, a decision transaction of one
/// part: the key holds kind `K`'s state, decided by `A` (the kind itself,
/// or another description of it, as CL.THROTTLE is of GCRA), parsed by
/// `parse` and answered by `reply` (with the change written, if any).
#[inline]
pub fn run<K: Kind, A: for<'s> Algorithm<State<'s> = K::State<'s>, Write = K::Write>>(
    ctx: Ctx<'_>,
    args: Argv<'_>,
    stats: &'static Counters,
    parse: impl FnOnce(&Argv<'_>) -> Result<(A, Options), ArgError>,
    reply: impl FnOnce(Ctx<'_>, &Decision, Option<&Change<K::Write>>, &Options, u32),
) {
    let mut tally = stats.tally();
    // Borrowed where it was parsed (RL.ACQUIRE's holds a 129-byte id).
    let parsed = parse(&args);
    let (limiter, opts) = match &parsed {
        Ok((limiter, opts)) => (limiter, *opts),
        Err(ArgError::WrongArity) => return reply_wrong_arity(ctx),
        Err(e) => return reply_error(ctx, &e.to_string()),
    };
    let flags = context_flags(ctx);
    // RL.ACQUIRE ... WAIT (only its grammar takes WAIT): a key with
    // waiters queues; otherwise decided here, and only a denial blocks.
    let mut may_block = None;
    if let Some(wait_ms) = opts.wait_ms {
        match wait::path(ctx, &args, &opts, flags) {
            wait::WaitPath::Queue => return wait::command(ctx, args, wait_ms),
            wait::WaitPath::Decide => may_block = Some(wait_ms),
            wait::WaitPath::Now => {}
        }
    }
    let now = clock::now();
    let mut part = match Part::<K, A>::open(ctx, args.key(1), args.bytes(1), limiter, ask(&opts), now) {
        Ok(part) => part,
        Err(wrong_type) => return reply_error(ctx, &wrong_type),
    };
    let allowed = part.decision().allowed;
    if let Some(wait_ms) = may_block {
        // Denied now, but a release or an expiry can make room: wait
        // (nothing is written; a repair waits for the grant's write).
        if !allowed && part.decision().retry_after_ms >= 0 {
            part.close();
            return wait::command(ctx, args, wait_ms);
        }
    }
    if !part::commit(std::slice::from_mut(&mut part), allowed, now, flags, opts.peek, |_| args.bytes(1)) {
        return reply_error(ctx, NOT_STORED);
    }
    let decision = part.decision();
    tally.decision(decision);
    if opts.refund.is_some() {
        tally.refunded(1);
    }
    reply(ctx, decision, part.written(), &opts, flags);
    if K::LEASE_REPLY {
        wait::after_call(ctx, args.bytes(1));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::module::command_info::Keys;
    use crate::module::kinds::{self, EachKind};

    fn words(c: &std::ffi::CStr) -> BTreeSet<String> {
        c.to_str().unwrap().split(' ').filter(|w| !w.is_empty()).map(str::to_string).collect()
    }

    /// What a declaration says twice (flags and ACL categories, flags and
    /// key spec) says the same, and each INFO line is named once.
    fn check(c: &Declaration, info_names: &mut BTreeSet<String>, sub: bool) {
        let name = c.name.to_str().unwrap();
        let info = c.docs.get();
        let (flags, categories) = (words(c.flags), words(info.acl_categories));
        for (flag, category) in [("write", "write"), ("readonly", "read"), ("fast", "fast"), ("admin", "admin")] {
            assert_eq!(flags.contains(flag), categories.contains(category), "{name}: {flag} and @{category}");
        }
        assert_eq!(flags.contains("getkeys-api"), matches!(info.keys, Keys::Counted { .. }), "{name}");
        assert_eq!(c.handler.is_none(), !c.subcommands.is_empty(), "{name}: a container has no handler");
        if c.handler.is_none() {
            assert!(flags.is_empty() && !sub, "{name}: a container has no flags and is no subcommand");
        }
        if let Some((line, _)) = c.info_line {
            assert!(info_names.insert(line.to_str().unwrap().to_string()), "{name}: INFO line {line:?} twice");
        }
        for s in c.subcommands {
            check(s, info_names, true);
        }
    }

    #[test]
    fn every_declaration_agrees_with_itself_and_the_table_keeps_its_order() {
        struct Kinds(BTreeSet<String>);
        impl EachKind for Kinds {
            fn kind<K: Kind>(&mut self) {
                let c = of_kind::<K>();
                assert_eq!(c.info_line.map(|(n, _)| n), Some(K::INFO_NAME));
                assert_eq!(Keys::legacy_positions(&c.docs.get().keys), (1, 1, 1));
                check(&c, &mut self.0, false);
            }
        }
        let mut info_names = Kinds(BTreeSet::new());
        kinds::each(&mut info_names);
        for c in TABLE {
            check(c, &mut info_names.0, false);
        }
        let names: Vec<&str> = TABLE.iter().map(|c| c.name.to_str().unwrap()).collect();
        assert_eq!(names, ["RL.ALL", "CL.THROTTLE", "RL.APPLY", "RL.RELEASE", "RL.RENEW", "RL.PEEK", "RL.TOP"]);
        let lines: Vec<&str> = TABLE.iter().filter_map(|c| c.info_line).map(|(n, _)| n.to_str().unwrap()).collect();
        assert_eq!(lines, ["all", "throttle", "release", "renew"]);
        let top: Vec<&str> = TABLE[6].subcommands.iter().map(|c| c.name.to_str().unwrap()).collect();
        assert_eq!(top, ["DENIED", "CONSUMED", "RESET", "HELP"]);
    }
}
