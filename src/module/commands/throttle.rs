//! `CL.THROTTLE key max_burst count period [quantity]`: a drop-in for
//! redis-cell's command, with its arguments and its reply, on our GCRA.
//!
//! It is RL.GCRA under other names: `count` per `period` *seconds*, a burst
//! of `max_burst + 1`, cost `quantity` (default 1). It builds the same
//! [`Gcra`] and stores the same [`GcraState`] in the same data type, so a key
//! is shared with `RL.GCRA key count period*1000 BURST max_burst+1`, and it
//! inherits the server clock, effect propagation (RL.APPLY), the repair of
//! far-future states and argument validation.
//!
//! Only the reply differs, as redis-cell clients expect it: five integers,
//! `limited` (1 = limited, the inverse of RL.*'s `allowed`), `limit`,
//! `remaining`, `retry_after` and `reset_after` in whole seconds rounded up,
//! `retry_after` being -1 whenever the call was allowed. It is an array in
//! RESP3 too, as redis-cell's is, so clients that switched to `HELLO 3` keep
//! parsing it.
//!
//! It runs RL.GCRA's flow ([`run`](super::run)) on GCRA's kind; only the
//! parsing and the reply differ.

use crate::core::time::Nanos;
use crate::core::time::{MAX_COUNT, MAX_PERIOD_MS, US_PER_MS};
use crate::core::{Algorithm, Change, Decision, Gcra, GcraState, Outcome, ParamError};
use crate::module::args::{self, ArgError, Options};
use crate::module::command_info::{Arg, Info, Keys, LIMITER_KEY, V0_1_0};
use crate::module::declaration::{Declaration, Docs};
use crate::module::entry::entry_point;
use crate::module::ffi::{reply_array, reply_i64, Argv, Ctx};
use crate::module::names;
use crate::module::stats::Counters;

/// redis-cell's parameters, as the GCRA they describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttle(Gcra);

/// The longest `period` in seconds: `period * 1000` is at most the
/// `period_ms` every other command accepts.
pub const MAX_PERIOD_S: u64 = MAX_PERIOD_MS / 1000;

/// `max_burst + 1` is the burst, which must fit the same range as BURST.
pub const MAX_BURST: u64 = MAX_COUNT - 1;

impl Throttle {
    /// Parses everything after the key (`arg(0)` is the command, `arg(1)`
    /// the key): the limiter and the quantity. Over any byte source, so it
    /// is tested without a server.
    pub fn parse_from<'a>(len: usize, arg: impl Fn(usize) -> &'a [u8]) -> Result<(Throttle, u64), ArgError> {
        // redis-cell takes exactly 4 or 5 arguments after the command name.
        if !(5..=6).contains(&len) {
            return Err(ArgError::WrongArity);
        }
        let max_burst = args::int_in(arg(2), "max_burst", 0, MAX_BURST)?;
        let count = args::count(arg(3), "count")?;
        let period_s = args::int_in(arg(4), "period", 1, MAX_PERIOD_S)?;
        let quantity = if len == 6 { args::int_in(arg(5), "quantity", 0, MAX_COUNT)? } else { 1 };
        // In range: max_burst + 1 <= 2^32-1 and period_s * 1000 <= 10^12.
        // The core's own error names BURST, which this command has not.
        let gcra = Gcra::new(count, period_s * 1000, max_burst + 1).map_err(|_| ParamError {
            arg: "max_burst",
            reason: "(max_burst + 1) * period / count exceeds 10^9 seconds",
        })?;
        Ok((Throttle(gcra), quantity))
    }
}

impl Algorithm for Throttle {
    type State<'s> = GcraState;
    type Write = GcraState;
    fn limit(&self) -> u64 {
        self.0.limit()
    }
    #[inline]
    fn check(&self, state: Option<GcraState>, now: Nanos, cost: u64) -> Outcome<GcraState> {
        Algorithm::check(&self.0, state, now, cost)
    }
    #[inline]
    fn repairs(&self, state: Option<GcraState>, now: Nanos) -> bool {
        Algorithm::repairs(&self.0, state, now)
    }
    /// CL.THROTTLE takes no refund; GCRA's, should anything ask.
    #[inline]
    fn refund(&self, state: GcraState, now: Nanos, units: u64) -> Outcome<GcraState> {
        Algorithm::refund(&self.0, state, now, units)
    }
}

/// Counted apart from RL.GCRA, so INFO shows how much redis-cell traffic is left.
pub static STATS: Counters = Counters::new();

/// `CL.THROTTLE`, with redis-cell's argument names; left out by the module
/// argument `cl-throttle no`.
pub const COMMAND: Declaration =
    Declaration::command(c"CL.THROTTLE", c"write deny-oom fast", entry_point!(command), Docs::Fixed(&DOCS))
        .info_line(c"throttle", &STATS)
        .enabled_if(names::cl_throttle);

const DOCS: Info = Info {
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
    tips: None,
};

fn parse(a: &Argv<'_>) -> Result<(Throttle, Options), ArgError> {
    let (throttle, quantity) = Throttle::parse_from(a.len(), |i| a.bytes(i))?;
    Ok((throttle, Options { burst: None, cost: quantity, refund: None, peek: false, wait_ms: None, max_wait_ms: None }))
}

/// redis-cell's five integers, an array in RESP2 and RESP3 alike.
fn reply(ctx: Ctx<'_>, decision: &Decision, _written: Option<&Change<GcraState>>, _opts: &Options, _flags: u32) {
    let fields = cell_reply(decision);
    reply_array(ctx, fields.len());
    for v in fields {
        reply_i64(ctx, v);
    }
}

/// `ceil(ms / 1000)`. The core's milliseconds are already rounded up from
/// microseconds, and rounding up twice is rounding up once: this is the
/// exact duration in whole seconds, rounded up, so waiting it is enough.
fn ceil_s(ms: u64) -> i64 {
    // ms <= 10^12 (MAX_SPAN_MS): fits i64 with room to spare.
    i64::try_from(ms.div_ceil(US_PER_MS)).unwrap_or(i64::MAX)
}

/// A decision as redis-cell's five integers.
pub fn cell_reply(d: &Decision) -> [i64; 5] {
    let retry_after = match (d.allowed, d.retry_after_ms) {
        // redis-cell: -1 when allowed, and when the quantity exceeds the
        // limit (the core's -1: it never can be allowed).
        (true, _) => -1,
        (false, ms) if ms < 0 => -1,
        (false, ms) => ceil_s(ms.unsigned_abs()),
    };
    [
        i64::from(!d.allowed),
        i64::try_from(d.limit).unwrap_or(i64::MAX),
        i64::try_from(d.remaining).unwrap_or(i64::MAX),
        retry_after,
        ceil_s(d.reset_after_ms),
    ]
}

/// Runs CL.THROTTLE: RL.GCRA's flow ([`run`](super::run)) with redis-cell's reply.
pub fn command(ctx: Ctx<'_>, args: Argv<'_>) {
    super::run::<Gcra, Throttle>(ctx, args, &STATS, parse, reply);
}

#[cfg(test)]
mod tests {
    use super::*;

    type Parsed = Result<(Throttle, u64), ArgError>;

    fn parse(line: &str) -> Parsed {
        let words: Vec<&str> = line.split(' ').collect();
        Throttle::parse_from(words.len(), |i| words[i].as_bytes())
    }

    fn gcra(limit: u64, period_ms: u64, burst: u64) -> Throttle {
        Throttle(Gcra::new(limit, period_ms, burst).expect("valid"))
    }

    #[test]
    fn arguments_map_onto_rl_gcra() {
        // CL.THROTTLE k 15 30 60 == RL.GCRA k 30 60000 BURST 16.
        assert_eq!(parse("CL.THROTTLE k 15 30 60"), Ok((gcra(30, 60_000, 16), 1)));
        assert_eq!(parse("CL.THROTTLE k 15 30 60 0"), Ok((gcra(30, 60_000, 16), 0)));
        assert_eq!(parse("CL.THROTTLE k 0 1 1 4294967295"), Ok((gcra(1, 1000, 1), MAX_COUNT)));
        assert_eq!(parse("CL.THROTTLE k 4294967294 4294967295 1"), Ok((gcra(MAX_COUNT, 1000, MAX_COUNT), 1)));
        assert_eq!(parse("CL.THROTTLE k 0 1 1000000000").map(|p| p.0), Ok(gcra(1, MAX_PERIOD_MS, 1)));
    }

    #[test]
    fn errors_name_the_argument() {
        let range = |arg, min, max| Err(ArgError::OutOfRange { arg, min, max });
        let cases: &[(&str, Parsed)] = &[
            ("CL.THROTTLE k 15 30", Err(ArgError::WrongArity)),
            ("CL.THROTTLE k 15 30 60 1 1", Err(ArgError::WrongArity)),
            ("CL.THROTTLE k -1 30 60", range("max_burst", 0, MAX_BURST)),
            ("CL.THROTTLE k 4294967295 30 60", range("max_burst", 0, MAX_BURST)),
            ("CL.THROTTLE k 15 0 60", range("count", 1, MAX_COUNT)),
            ("CL.THROTTLE k 15 4294967296 60", range("count", 1, MAX_COUNT)),
            ("CL.THROTTLE k 15 30 0", range("period", 1, MAX_PERIOD_S)),
            ("CL.THROTTLE k 15 30 1000000001", range("period", 1, MAX_PERIOD_S)),
            ("CL.THROTTLE k 15 30 60 -1", range("quantity", 0, MAX_COUNT)),
            ("CL.THROTTLE k 15 30 60 4294967296", range("quantity", 0, MAX_COUNT)),
            ("CL.THROTTLE k 1.5 30 60", Err(ArgError::NotInteger("max_burst"))),
            ("CL.THROTTLE k 15 x 60", Err(ArgError::NotInteger("count"))),
            ("CL.THROTTLE k 15 30 60s", Err(ArgError::NotInteger("period"))),
            ("CL.THROTTLE k 15 30 60 +1", Err(ArgError::NotInteger("quantity"))),
            ("CL.THROTTLE k 015 30 60", Err(ArgError::NotInteger("max_burst"))),
            ("CL.THROTTLE k 15 30 060", Err(ArgError::NotInteger("period"))),
            ("CL.THROTTLE k 15 30 60 -0", Err(ArgError::NotInteger("quantity"))),
        ];
        for (line, want) in cases {
            assert_eq!(&parse(line), want, "{line}");
        }
        // Each in range, but 2^32-1 units of 10^9 s take too long to refill.
        let e = parse("CL.THROTTLE k 4294967294 1 1000000000").unwrap_err();
        assert_eq!(
            e.to_string(),
            "ERR max_burst is out of range: (max_burst + 1) * period / count exceeds 10^9 seconds"
        );
    }

    fn decision(allowed: bool, remaining: u64, retry_after_ms: i64, reset_after_ms: u64) -> Decision {
        Decision { allowed, limit: 16, remaining, retry_after_ms, reset_after_ms, wait_ms: 0 }
    }

    #[test]
    fn replies_are_redis_cells_seconds_rounded_up() {
        let cases = [
            (decision(true, 15, 0, 2000), [0, 16, 15, -1, 2]),
            (decision(true, 16, 0, 0), [0, 16, 16, -1, 0]),
            (decision(true, 15, 0, 1), [0, 16, 15, -1, 1]),
            (decision(true, 15, 0, 1001), [0, 16, 15, -1, 2]),
            (decision(false, 0, 2000, 32_000), [1, 16, 0, 2, 32]),
            (decision(false, 0, 1, 31_999), [1, 16, 0, 1, 32]),
            (decision(false, 0, 1999, 30_001), [1, 16, 0, 2, 31]),
            // Quantity above the limit: never allowed.
            (decision(false, 16, -1, 0), [1, 16, 16, -1, 0]),
        ];
        for (d, want) in cases {
            assert_eq!(cell_reply(&d), want, "{d:?}");
        }
    }
}
