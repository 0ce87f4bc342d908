//! `RL.ALL numkeys key [key ...] spec [spec ...] [MAXWAIT ms] [PEEK]`
//!
//! Several limits, one decision: every key is checked against its own spec
//! at one instant, and cost is consumed from every key only if every limit
//! allows it. Otherwise no key consumes anything.
//!
//! A `REFUND n` spec gives units back ("reserve, then settle" for several
//! dimensions in one call): it never denies, and it is applied only when
//! the whole call is allowed; when another spec denies, nothing is refunded
//! and the refund spec answers its state as it is (allowed).
//!
//! `MAXWAIT ms` (every spec a GCRA or a token bucket): a call that some limit
//! denies now, but that every limit would allow within `ms`, is booked for
//! the earliest instant at which all of them do, one start for every key;
//! each per-key reply then carries `wait_ms`. All or nothing, as always.
//!
//! Repairs: a stored state that reads as drained because it lies too far
//! ahead (a backward clock jump, tightened parameters) is stored as drained
//! by the first call that sees it, as the single commands do, even when the
//! call as a whole is denied: it admits nothing, and without it the key
//! would stay blocked until the clock caught up. PEEK stores nothing at all.
//!
//! In a cluster the keys must share a hash slot. On Redis 7.0 the server
//! finds them only by asking this command (the `getkeys-api` flag): see
//! [`report_keys`].

use std::os::raw::c_int;

use redis_module::raw;

use crate::core::time::{Nanos, NS_PER_MS};
use crate::core::{Decision, Verdict};
use crate::module::args::{self, ArgError};
use crate::module::clock;
use crate::module::declaration::{Declaration, Docs};
use crate::module::entry::entry_point;
use crate::module::ffi::{
    api, context_flags, has, reply_array, reply_error, reply_i64, reply_wrong_arity, Argv, Ctx, KeyName,
};
use crate::module::kinds::{with_kinds, Kind};
use crate::module::reply;
use crate::module::state::{KeyState, NOT_STORED};
use crate::module::stats::Counters;
use crate::module::top_summary as top;

use super::all_args::{self, Limit};

/// RL.ALL's `INFO rl` counters.
pub static STATS: Counters = Counters::new();

/// O(N), so not fast. The keys follow numkeys, which no first/last/step can
/// express: Redis 7.0 finds them only through the getkeys-api callback
/// ([`report_keys`]), later servers also from the key spec. Its docs are
/// made from the kinds' (`all_args::docs`).
pub const COMMAND: Declaration =
    Declaration::command(c"RL.ALL", c"write deny-oom getkeys-api", entry_point!(command), Docs::AtLoad(all_args::docs))
        .info_line(c"all", &STATS);

/// Runs RL.ALL end to end, or answers the server's key-position request.
pub fn command(ctx: Ctx<'_>, args: Argv<'_>) {
    if keys_position_request(ctx) {
        return report_keys(ctx, &args);
    }
    let mut tally = STATS.tally();
    // The parser looks at most words more than once (where a spec ends,
    // then its grammar): read each one from the server once. Calls longer
    // than WORDS read them as they go.
    let mut words: [&[u8]; WORDS] = [&[]; WORDS];
    let parsed = if args.len() <= WORDS {
        for (i, w) in words.iter_mut().enumerate().take(args.len()) {
            *w = args.bytes(i);
        }
        all_args::all_from(args.len(), |i| words[i])
    } else {
        all_args::all_from(args.len(), |i| args.bytes(i))
    };
    let parsed = match parsed {
        Ok(parsed) => parsed,
        Err(ArgError::WrongArity) => return reply_wrong_arity(ctx),
        Err(e) => return reply_error(ctx, &e.to_string()),
    };

    // One instant for every key, so the limits are checked together.
    let now = clock::now();
    // At most args::MAX_KEYS parts, each holding its key open: duplicate
    // keys were refused, so no two parts alias one value.
    let mut parts: Vec<AnyPart> = Vec::with_capacity(parsed.specs.len());
    for (i, spec) in parsed.specs.iter().enumerate() {
        let name = key_name(&args, &words, 2 + i);
        match AnyPart::open(ctx, args.key(2 + i), name, spec.limit, spec.cost, spec.refund, now) {
            Ok(part) => parts.push(part),
            Err(wrong_type) => {
                // Closes every key opened so far; nothing was written.
                drop(parts);
                return reply_error(ctx, &wrong_type);
            }
        }
    }

    let mut allowed = parts.iter().all(|p| p.get().decision().allowed);
    if let (false, Some(ms)) = (allowed, parsed.max_wait_ms) {
        // At most 10^6 ms: fits in ns.
        if let Some(start) = common_start(&parts, now).filter(|&start| start <= ms * NS_PER_MS) {
            for part in &mut parts {
                part.get_mut().book(start, now);
            }
            allowed = true;
        }
    }
    let flags = context_flags(ctx);
    let retry_after_ms = if allowed { 0 } else { combined_retry(parts.iter().map(|p| p.get().decision())) };

    let mut refused = false;
    if !parsed.peek {
        for part in &mut parts {
            refused |= !part.get_mut().store(allowed, now, flags);
        }
    }
    // Whatever was stored was propagated with its write, even if a later
    // key was refused, so that replicas and the AOF hold what this server
    // holds. Close every key before the keyspace events, as the single
    // commands do.
    for part in &mut parts {
        part.get_mut().close();
    }
    for part in &mut parts {
        part.get_mut().announce();
    }
    if refused {
        return reply_error(ctx, NOT_STORED);
    }
    tally.decided(allowed, retry_after_ms);
    if !parsed.peek {
        // Each denying key once, or each key's cost when all allowed; a
        // refund spec consumes nothing and never denies: not counted.
        for (i, (part, spec)) in parts.iter().zip(&parsed.specs).enumerate() {
            let d = part.get().decision();
            if spec.refund.is_none() && (allowed || !d.allowed) {
                top::decided(key_name(&args, &words, 2 + i), d, spec.cost);
            }
        }
    }
    if allowed && !parsed.peek {
        tally.refunded(parsed.specs.iter().filter(|s| s.refund.is_some()).count() as u64);
    }
    reply_all(ctx, allowed, retry_after_ms, &parts, parsed.max_wait_ms.is_some(), reply::wants_map(flags));
}

/// The most arguments read once, up front (a call of 16 keys with short
/// specs fits).
const WORDS: usize = 96;

/// Argument `i`'s bytes: from `words` when the call fit there.
fn key_name<'a>(args: &Argv<'a>, words: &[&'a [u8]; WORDS], i: usize) -> &'a [u8] {
    if args.len() <= WORDS {
        words[i]
    } else {
        args.bytes(i)
    }
}

/// The earliest instant (ns from now) at which every limit allows, `None`
/// if some limit never can.
fn common_start(parts: &[AnyPart<'_>], now: Nanos) -> Option<u64> {
    parts.iter().try_fold(0, |start: u64, p| p.get().conforms_in(now).map(|s| s.max(start)))
}

/// The retry of a denied call: -1 if some denying limit can never allow
/// (its cost exceeds its limit), else the longest wait among the denying
/// limits. Limits only refill while nothing else happens, so after that
/// wait every one of them allows.
fn combined_retry<'a>(decisions: impl Iterator<Item = &'a Decision>) -> i64 {
    let mut longest = 0;
    for d in decisions.filter(|d| !d.allowed) {
        if d.retry_after_ms < 0 {
            return -1;
        }
        longest = longest.max(d.retry_after_ms);
    }
    longest
}

/// RESP2: `[allowed, retry_after_ms, [5 integers] per key]`; RESP3: a map
/// with `allowed` (a boolean), `retry_after_ms` and `limits`.
fn reply_all(ctx: Ctx<'_>, allowed: bool, retry_after_ms: i64, parts: &[AnyPart], booking: bool, map: bool) {
    if map {
        let raw = ctx.raw();
        // SAFETY: the command's context (a `Ctx`).
        unsafe { api!(RedisModule_ReplyWithMap(raw, 3)) };
        reply::key(ctx, c"allowed");
        // SAFETY: the command's context (a `Ctx`).
        unsafe { api!(RedisModule_ReplyWithBool(raw, allowed as c_int)) };
        reply::key(ctx, c"retry_after_ms");
        reply_i64(ctx, retry_after_ms);
        reply::key(ctx, c"limits");
        reply_array(ctx, parts.len());
    } else {
        reply_array(ctx, 2 + parts.len());
        reply_i64(ctx, allowed as i64);
        reply_i64(ctx, retry_after_ms);
    }
    for part in parts {
        part.get().reply(ctx, booking, map);
    }
}

/// Whether the server is asking for the key positions (cluster routing on
/// Redis 7.0, `COMMAND GETKEYS` where no key spec applies) rather than
/// running the command.
fn keys_position_request(ctx: Ctx<'_>) -> bool {
    // SAFETY: the command's context (a `Ctx`); checked with `has!` first.
    has!(RedisModule_IsKeysPositionRequest) && unsafe { api!(RedisModule_IsKeysPositionRequest(ctx.raw())) } != 0
}

/// Declares arguments `2..2 + numkeys` as keys, as the command's key spec
/// does, so routing and `COMMAND GETKEYS` agree. A `numkeys` that is not an
/// integer or exceeds the arguments declares no key: the command then runs
/// where it was sent and answers the error itself. (A valid `numkeys` above
/// the RL.ALL maximum is still declared: the keys are bounded by argc, and
/// the command answers that error wherever it is routed.)
fn report_keys(ctx: Ctx<'_>, args: &Argv<'_>) {
    let ctx = ctx.raw();
    let Some(after) = args.len().checked_sub(2) else { return };
    let Ok(numkeys) = args::int_in(args.bytes(1), "numkeys", 0, after as u64) else { return };
    let flags =
        (raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_ACCESS | raw::REDISMODULE_CMD_KEY_UPDATE) as c_int;
    let with_flags = has!(RedisModule_KeyAtPosWithFlags);
    // numkeys <= argc - 2, so every position fits in c_int like argc does.
    for pos in 2..2 + numkeys as c_int {
        if with_flags {
            // SAFETY: the command's context, in a keys-position request; `pos` is an
            // argument's index.
            unsafe { api!(RedisModule_KeyAtPosWithFlags(ctx, pos, flags)) };
        } else {
            // SAFETY: the command's context, in a keys-position request; `pos` is an
            // argument's index.
            unsafe { api!(RedisModule_KeyAtPos(ctx, pos)) };
        }
    }
}

/// One key's part in the decision.
trait Pending {
    /// What a PEEK of this limit alone answers (for an allowed call, also
    /// the state after consuming; for a refund, the state after it, until
    /// [`store`](Self::store) finds the call denied: then the state as it is).
    fn decision(&self) -> &Decision;
    /// Stores what this key gets from the whole decision: its consumed
    /// state if every limit allowed, else at most a repair (`flags`: the
    /// call's context flags). False if the server refused the value.
    fn store(&mut self, all_allowed: bool, now: Nanos, flags: u32) -> bool;
    /// Closes the key.
    fn close(&mut self);
    /// Signals and notifies what [`store`](Self::store) wrote (its effect
    /// was propagated with the write).
    fn announce(&mut self);
    /// Replies as the single command would (a lease only if one was
    /// written; `wait_ms` with `booking`).
    fn reply(&self, ctx: Ctx<'_>, booking: bool, map: bool);
    /// The least wait (ns) after which this limit allows; `None`: never
    /// (or it does not book). A refund spec allows now.
    fn conforms_in(&self, now: Nanos) -> Option<u64>;
    /// Books this limit for `start` ns from now, at least its
    /// [`conforms_in`](Self::conforms_in): its decision becomes allowed. A
    /// refund spec stays as it is.
    fn book(&mut self, start: u64, now: Nanos);
}

struct Part<'c, K: Kind> {
    limiter: K,
    /// The cost to take (meaningless for a refund spec).
    cost: u64,
    /// A `REFUND` spec: it never denies.
    refund: bool,
    /// Open from the read until every key is stored.
    key: KeyState<'c, K>,
    verdict: Verdict<K::Write>,
    /// Whether [`store`](Pending::store) wrote the verdict's change.
    wrote: bool,
}

impl<'c, K: Kind> Part<'c, K> {
    /// Opens and reads the key, and decides its limit alone (or, with
    /// `refund`, settles it: always allowed).
    fn open(
        ctx: Ctx<'c>,
        name: KeyName<'c>,
        key_name: &[u8],
        limiter: K,
        cost: u64,
        refund: Option<u64>,
        now: Nanos,
    ) -> Result<Self, String> {
        let key = KeyState::<K>::open(ctx, name).map_err(|e| e.message::<K>())?;
        let mut verdict = match refund {
            Some(units) => limiter.settle(key.state(), now, units),
            None => limiter.decide(key.state(), now, cost),
        };
        K::behind_waiters(ctx, &limiter, key.state(), now, key_name, &mut verdict);
        Ok(Self { limiter, cost, refund: refund.is_some(), key, verdict, wrote: false })
    }
}

impl<K: Kind> Pending for Part<'_, K> {
    fn decision(&self) -> &Decision {
        &self.verdict.decision
    }

    fn store(&mut self, all_allowed: bool, now: Nanos, flags: u32) -> bool {
        let change = if all_allowed {
            self.verdict.change
        } else {
            // Consume (or refund) nothing; keep only a repair. A COST 0
            // check stores exactly that (and nothing in steady operation).
            let status = self.limiter.decide(self.key.state(), now, 0);
            if self.refund {
                // Nothing refunded: answer the state as it is.
                self.verdict.decision = status.decision;
            }
            status.change
        };
        match change {
            Some(change) => {
                let stored = self.key.write(&change, now, flags);
                self.wrote = stored && all_allowed;
                stored
            }
            None => true,
        }
    }

    fn close(&mut self) {
        self.key.close();
    }

    fn announce(&mut self) {
        self.key.announce();
    }

    fn reply(&self, ctx: Ctx<'_>, booking: bool, map: bool) {
        let written = self.verdict.change.as_ref().filter(|_| self.wrote);
        reply::kind::<K>(ctx, &self.verdict.decision, written, booking, map);
    }

    fn conforms_in(&self, now: Nanos) -> Option<u64> {
        if self.refund {
            Some(0)
        } else {
            self.limiter.conforms_in(self.key.state(), now, self.cost)
        }
    }

    fn book(&mut self, start: u64, now: Nanos) {
        if !self.refund {
            self.verdict = self.limiter.decide_booked(self.key.state(), now, self.cost, start);
        }
    }
}

macro_rules! any_part {
    ($($variant:ident: $kind:ty,)*) => {
        /// A part of any kind, without boxing. (A concurrency part, which
        /// carries a lease id, is the largest: in a vector of at most 16,
        /// made once per call, that costs less than an allocation each.)
        #[allow(clippy::large_enum_variant)]
        enum AnyPart<'c> {
            $($variant(Part<'c, $kind>),)*
        }

        impl<'c> AnyPart<'c> {
            fn open(
                ctx: Ctx<'c>,
                name: KeyName<'c>,
                key_name: &[u8],
                limit: Limit,
                cost: u64,
                refund: Option<u64>,
                now: Nanos,
            ) -> Result<Self, String> {
                match limit {
                    $(Limit::$variant(l) => Part::open(ctx, name, key_name, l, cost, refund, now).map(AnyPart::$variant),)*
                }
            }

            fn get(&self) -> &dyn Pending {
                match self {
                    $(AnyPart::$variant(p) => p,)*
                }
            }

            fn get_mut(&mut self) -> &mut dyn Pending {
                match self {
                    $(AnyPart::$variant(p) => p,)*
                }
            }
        }
    };
}
with_kinds!(any_part);

#[cfg(test)]
mod tests {
    use super::*;

    fn d(allowed: bool, retry_after_ms: i64) -> Decision {
        Decision { allowed, limit: 10, remaining: 0, retry_after_ms, reset_after_ms: 0, wait_ms: 0 }
    }

    #[test]
    fn retry_is_the_longest_wait_among_the_denying_limits() {
        let ds = [d(false, 100), d(true, 0), d(false, 250), d(false, 1)];
        assert_eq!(combined_retry(ds.iter()), 250);
    }

    #[test]
    fn retry_is_never_when_any_denying_limit_can_never_allow() {
        let ds = [d(false, 100), d(false, -1), d(false, 250)];
        assert_eq!(combined_retry(ds.iter()), -1);
    }

    #[test]
    fn allowed_limits_do_not_count_towards_the_retry() {
        assert_eq!(combined_retry([d(true, 0), d(false, 7)].iter()), 7);
    }
}
