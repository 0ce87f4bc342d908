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

use crate::core::time::{Nanos, NS_PER_MS};
use crate::core::{Algorithm, Change, Decision, Verdict};

use super::args::{ArgError, Options};
use super::clock;
use super::ffi::{context_flags, reply_error, reply_wrong_arity, Argv, Ctx};
use super::kinds::Kind;
use super::part::{self, Ask, Part};
use super::reply;
use super::state::NOT_STORED;
use super::stats::Counters;

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
    Ask { cost: opts.cost, refund: opts.refund, max_wait_ns: opts.max_wait_ms.map(|ms| ms * NS_PER_MS) }
}

/// What a call with `opts` decides: a refund settles, `MAXWAIT` may book,
/// anything else is decided as it is (RL.PEEK, which opens no part).
#[inline]
pub fn decide<A: Algorithm>(limiter: &A, state: Option<A::State<'_>>, now: Nanos, opts: &Options) -> Verdict<A::Write> {
    match ask(opts) {
        Ask { refund: Some(units), .. } => limiter.settle(state, now, units),
        Ask { max_wait_ns: None, cost, .. } => limiter.decide(state, now, cost),
        Ask { max_wait_ns: Some(ns), cost, .. } => limiter.decide_within(state, now, cost, ns),
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
    let mut one = match Part::<K, A>::open(ctx, args.key(1), args.bytes(1), limiter, ask(&opts), now) {
        Ok(part) => [part],
        Err(wrong_type) => return reply_error(ctx, &wrong_type),
    };
    let decision = one[0].verdict.decision;
    if let Some(wait_ms) = may_block {
        // Denied now, but a release or an expiry can make room: wait
        // (nothing is written; a repair waits for the grant's write).
        if !decision.allowed && decision.retry_after_ms >= 0 {
            let [part] = one;
            part.abandon();
            return wait::command(ctx, args, wait_ms);
        }
    }
    if !part::commit(&mut one, decision.allowed, now, flags, opts.peek, |_| args.bytes(1)) {
        return reply_error(ctx, NOT_STORED);
    }
    tally.decision(&decision);
    if opts.refund.is_some() {
        tally.refunded(1);
    }
    reply(ctx, &decision, one[0].written(), &opts, flags);
    if K::LEASE_REPLY {
        wait::after_call(ctx, args.bytes(1));
    }
}
