//! `RL.RELEASE key id` and `RL.RENEW key id lease_ms`: end or extend a live
//! lease on a key that `RL.ACQUIRE` keeps. The integer reply is 1 if the
//! lease was live (and is now ended, or extended to `now + lease_ms`), else
//! 0: unknown, already released, or expired, and nothing is written. A
//! write goes through the one key-state path, the expired leases dropped
//! with it, and is propagated as the change; ending the last live lease
//! deletes the key. Each fires its own keyspace event (`rl.release`,
//! `rl.renew`; a release that empties the key then `del`).

use std::ffi::CStr;

use crate::core::lease::{LeaseBlock, LeaseReply, Leases};
use crate::module::acquire::{classify, Acquire};
use crate::module::args;
use crate::module::clock;
use crate::module::command_info::{Arg, Info, Keys, LEASE_COMPLEXITY, LIMITER_KEY, V0_2_0};
use crate::module::declaration::{Declaration, Docs};
use crate::module::entry::entry_point;
use crate::module::ffi::{context_flags, reply_error, reply_i64, reply_wrong_arity, Argv, Ctx};
use crate::module::state::{KeyState, NOT_STORED};
use crate::module::stats::{Counters, Tally};

/// RL.RELEASE's `INFO rl` counters (allowed: answered 1).
pub static RELEASE_STATS: Counters = Counters::new();
/// RL.RENEW's.
pub static RENEW_STATS: Counters = Counters::new();

// Not `deny-oom`: ending a lease frees memory, and a renewal takes none.
pub const RELEASE: Declaration =
    Declaration::command(c"RL.RELEASE", c"write fast", entry_point!(release), Docs::Fixed(&RELEASE_DOCS))
        .info_line(c"release", &RELEASE_STATS);

pub const RENEW: Declaration =
    Declaration::command(c"RL.RENEW", c"write fast", entry_point!(renew), Docs::Fixed(&RENEW_DOCS))
        .info_line(c"renew", &RENEW_STATS);

const RELEASE_DOCS: Info = Info {
    since: V0_2_0,
    summary: c"Ends a live lease of a concurrency limit: 1 if it was live, else 0",
    complexity: LEASE_COMPLEXITY,
    arity: 3,
    keys: Keys::One { flags: LIMITER_KEY },
    args: &[Arg::key(c"key"), Arg::string(c"id")],
    acl_categories: c"write fast",
    tips: None,
};

const RENEW_DOCS: Info = Info {
    since: V0_2_0,
    summary: c"Extends a live lease of a concurrency limit to lease_ms from now: 1 if it was live, else 0",
    complexity: LEASE_COMPLEXITY,
    arity: 4,
    keys: Keys::One { flags: LIMITER_KEY },
    args: &[Arg::key(c"key"), Arg::string(c"id"), Arg::int(c"lease_ms")],
    acl_categories: c"write fast",
    tips: None,
};

pub fn release(ctx: Ctx<'_>, args: Argv<'_>) {
    let tally = RELEASE_STATS.tally();
    if args.len() != 3 {
        return reply_wrong_arity(ctx);
    }
    // Borrowed where it was parsed: an id is 129 bytes.
    let parsed = args::id(args.bytes(2), "id");
    let id = match &parsed {
        Ok(id) => id,
        Err(e) => return reply_error(ctx, &e.to_string()),
    };
    settle(ctx, &args, tally, c"rl.release", |set, now| Leases::release(set, now, id));
}

pub fn renew(ctx: Ctx<'_>, args: Argv<'_>) {
    let tally = RENEW_STATS.tally();
    if args.len() != 4 {
        return reply_wrong_arity(ctx);
    }
    let parsed = args::id(args.bytes(2), "id").and_then(|id| Ok((id, args::period(args.bytes(3), "lease_ms")?)));
    let (id, lease_ms) = match &parsed {
        Ok((id, lease_ms)) => (id, *lease_ms),
        Err(e) => return reply_error(ctx, &e.to_string()),
    };
    settle(ctx, &args, tally, c"rl.renew", |set, now| {
        // lease_ms was checked above: the core's range is the same.
        Leases::renew(set, now, id, lease_ms).unwrap_or(LeaseReply { ok: false, change: None })
    });
}

/// Reads the key's lease set, asks `op`, writes its change (if any), and
/// answers 1 or 0.
fn settle(
    ctx: Ctx<'_>,
    args: &Argv<'_>,
    mut tally: Tally,
    event: &'static CStr,
    op: impl FnOnce(Option<&LeaseBlock<&[u64]>>, u64) -> LeaseReply,
) {
    let mut key = match KeyState::<Acquire>::open(ctx, args.key(1)) {
        Ok(key) => key,
        Err(e) => return reply_error(ctx, &e.message::<Acquire>()),
    };
    let now = clock::now();
    let r = op(key.state().as_ref(), now.0);
    if let Some(change) = r.change.map(classify) {
        key.set_event(event);
        if !key.commit(&change, now, context_flags(ctx)) {
            return reply_error(ctx, NOT_STORED);
        }
        // A release makes room: waiters on the key are granted at once.
        super::wait::wake(ctx, args.bytes(1));
    }
    tally.answered(r.ok);
    reply_i64(ctx, i64::from(r.ok));
}
