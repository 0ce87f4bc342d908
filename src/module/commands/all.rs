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
//! [`all_args::report_keys`].

use smallvec::SmallVec;

use crate::core::combined_retry;
use crate::core::time::{Nanos, NS_PER_MS};
use crate::module::args::ArgError;
use crate::module::clock;
use crate::module::declaration::{Declaration, Docs};
use crate::module::entry::entry_point;
use crate::module::ffi::{context_flags, reply_error, reply_wrong_arity, Argv, Ctx};
use crate::module::part::{self, AnyPart, Ask, Member};
use crate::module::reply;
use crate::module::state::NOT_STORED;
use crate::module::stats::Counters;

use super::all_args;

/// RL.ALL's `INFO rl` counters.
pub static STATS: Counters = Counters::new();

/// O(N), so not fast. The keys follow numkeys, which no first/last/step can
/// express: Redis 7.0 finds them only through the getkeys-api callback
/// ([`all_args::report_keys`]), later servers also from the key spec. Its
/// docs are made from the kinds' (`all_args::docs`).
pub const COMMAND: Declaration =
    Declaration::command(c"RL.ALL", c"write deny-oom getkeys-api", entry_point!(command), Docs::AtLoad(all_args::docs))
        .info_line(c"all", &STATS);

/// Runs RL.ALL end to end, or answers the server's key-position request.
pub fn command(ctx: Ctx<'_>, args: Argv<'_>) {
    if all_args::keys_position_request(ctx) {
        return all_args::report_keys(ctx, &args);
    }
    let mut tally = STATS.tally();
    // The parser looks at most words more than once (where a spec ends,
    // then its grammar): read each one from the server once. Calls longer
    // than WORDS read them as they go.
    let mut words: [&[u8]; WORDS] = [&[]; WORDS];
    let fits = args.len() <= WORDS;
    if fits {
        for (i, w) in words.iter_mut().enumerate().take(args.len()) {
            *w = args.bytes(i);
        }
    }
    let word = |i: usize| if fits { words[i] } else { args.bytes(i) };
    let parsed = match all_args::all_from(args.len(), word) {
        Ok(parsed) => parsed,
        Err(ArgError::WrongArity) => return reply_wrong_arity(ctx),
        Err(e) => return reply_error(ctx, &e.to_string()),
    };

    // One instant for every key, so the limits are checked together. At
    // most MAX_KEYS parts, each holding its key open: duplicate keys were
    // refused, so no two parts alias one value.
    let now = clock::now();
    // In place (at most MAX_KEYS): no allocation per call.
    let mut parts: SmallVec<[AnyPart; all_args::MAX_KEYS]> = SmallVec::new();
    for (i, spec) in parsed.specs.iter().enumerate() {
        let ask = Ask { cost: spec.cost, refund: spec.refund, max_wait_ns: None, peek: parsed.peek };
        match spec.limit.open(ctx, args.key(2 + i), word(2 + i), ask, now) {
            Ok(part) => parts.push(part),
            // Closes every key opened so far; nothing was written.
            Err(wrong_type) => return reply_error(ctx, &wrong_type),
        }
    }

    let mut allowed = parts.iter().all(|p| p.decision().allowed);
    if let (false, Some(ms)) = (allowed, parsed.max_wait_ms) {
        // At most 10^6 ms: fits in ns.
        if let Some(start) = common_start(&parts, now).filter(|&start| start <= ms * NS_PER_MS) {
            parts.iter_mut().for_each(|p| p.book(start, now));
            allowed = true;
        }
    }
    let flags = context_flags(ctx);
    let retry_after_ms = if allowed { 0 } else { combined_retry(parts.iter().map(|p| p.decision())) };
    if !part::commit(&mut parts, allowed, now, flags, parsed.peek, |i| word(2 + i)) {
        return reply_error(ctx, NOT_STORED);
    }
    tally.decided(allowed, retry_after_ms);
    if allowed && !parsed.peek {
        tally.refunded(parsed.specs.iter().filter(|s| s.refund.is_some()).count() as u64);
    }
    let (booking, map) = (parsed.max_wait_ms.is_some(), reply::wants_map(flags));
    reply::all(ctx, allowed, retry_after_ms, parts.len(), map, |i| parts[i].reply(ctx, booking, map));
}

/// The most arguments read once, up front (a call of 16 keys with short
/// specs fits).
const WORDS: usize = 96;

/// The earliest instant (ns from now) at which every limit allows, `None`
/// if some limit never can.
fn common_start(parts: &[AnyPart<'_, '_>], now: Nanos) -> Option<u64> {
    parts.iter().try_fold(0, |start: u64, p| p.conforms_in(now).map(|s| s.max(start)))
}
