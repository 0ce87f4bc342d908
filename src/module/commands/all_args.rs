//! `RL.ALL`'s arguments: `numkeys`, the keys, one spec per key,
//! `[MAXWAIT ms] [PEEK]`.
//! A spec is a kind's keyword followed by that kind's own grammar (see
//! `kinds`), read through the same cursor as the kind's command.

use std::ffi::{CStr, CString};
use std::os::raw::c_int;

use redis_module::raw;

use crate::core::time::Nanos;
use crate::core::Algorithm;
use crate::module::args::{int_in, max_wait, printable, ArgError, Cursor, BOOKS_ONLY};
use crate::module::command_info::{self, Info};
use crate::module::ffi::{api, has, Argv, Ctx, KeyName};
use crate::module::kinds::{self, with_kinds, EachKind, Kind};
use crate::module::part::{AnyPart, Ask, Part};

/// RL.ALL's docs, with one spec form per kind, made from the kind's own
/// command docs (`command_info::all`). Once per load: the docs are handed
/// to the server for good.
pub fn docs() -> &'static Info {
    struct Forms(Vec<(&'static CStr, &'static CStr, &'static Info)>);
    impl EachKind for Forms {
        fn kind<K: Kind>(&mut self) {
            let keyword = CString::new(K::KEYWORD).unwrap_or_default();
            self.0.push((K::INFO_NAME, Box::leak(keyword.into_boxed_c_str()), K::DOCS));
        }
    }
    let mut forms = Forms(Vec::new());
    kinds::each(&mut forms);
    command_info::all(&forms.0)
}

/// The most keys one RL.ALL call may name. A bound, so that no argument can
/// make a call allocate or hold open an unbounded number of keys; several
/// limits per request (user, tenant, global, one per resource) stay far below it.
pub const MAX_KEYS: usize = 16;

macro_rules! limit {
    ($($variant:ident: $kind:ty,)*) => {
        /// One limit of an RL.ALL call: its kind with validated parameters.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Limit {
            $($variant($kind),)*
        }

        impl Limit {
            /// Whether its kind books (`MAXWAIT`).
            pub fn books(&self) -> bool {
                match self {
                    $(Limit::$variant(_) => <$kind as Algorithm>::BOOKS,)*
                }
            }

            /// Opens the key `name` (`key`: its bytes) and decides this limit
            /// alone for `ask` at `now`: the call's part for that key.
            #[inline]
            pub fn open<'c, 'a>(
                &'a self,
                ctx: Ctx<'c>,
                name: KeyName<'c>,
                key: &[u8],
                ask: Ask,
                now: Nanos,
            ) -> Result<AnyPart<'c, 'a>, String> {
                match self {
                    $(Limit::$variant(l) => Part::<$kind>::open(ctx, name, key, l, ask, now).map(AnyPart::$variant),)*
                }
            }
        }

        /// The spec `word args[from..end]`, or `None` if `word` names no kind.
        fn parse_spec<'a>(
            word: &[u8],
            arg: impl Fn(usize) -> &'a [u8],
            from: usize,
            end: usize,
        ) -> Option<Result<Spec, ArgError>> {
            $(if word.eq_ignore_ascii_case(<$kind as Kind>::KEYWORD.as_bytes()) {
                let parsed = spec_of::<$kind, _>(arg, from, end);
                return Some(parsed.map(|(limit, cost, refund)| Spec { limit: Limit::$variant(limit), cost, refund }));
            })*
            None
        }
    };
}
with_kinds!(limit);

/// One spec of an RL.ALL call: the limit and the cost to take from it, or
/// (`REFUND n`) the units to give back to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub limit: Limit,
    pub cost: u64,
    pub refund: Option<u64>,
}

/// A parsed `RL.ALL numkeys key [key ...] spec [spec ...] [MAXWAIT ms]
/// [PEEK]`. The keys are arguments `2..2 + specs.len()`, spec `i`
/// belonging to key `i`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllArgs {
    pub specs: Vec<Spec>,
    /// `MAXWAIT ms`: book every limit at one start within `ms`.
    pub max_wait_ms: Option<u64>,
    pub peek: bool,
}

/// A spec keyword, MAXWAIT or PEEK: where one spec's options end. (Every
/// one starts with a letter: a spec's numbers are told apart by their first
/// byte.)
fn ends_spec(word: &[u8]) -> bool {
    word.first().is_some_and(u8::is_ascii_alphabetic)
        && (word.eq_ignore_ascii_case(b"PEEK") || word.eq_ignore_ascii_case(b"MAXWAIT") || kinds::is_keyword(word))
}

/// The options whose next word is always their value, even when it spells
/// a keyword or PEEK (SPEC): that word never ends a spec.
const TAKES_VALUE: [&[u8]; 5] = [b"COST", b"REFUND", b"BURST", b"TZ", b"ID"];

fn takes_value(word: &[u8]) -> bool {
    word.first().is_some_and(u8::is_ascii_alphabetic) && TAKES_VALUE.iter().any(|o| word.eq_ignore_ascii_case(o))
}

/// Where the spec whose keyword is at `at` ends: the next spec keyword or
/// PEEK that is not an option's value, or `len`.
fn spec_end<'a>(arg: &impl Fn(usize) -> &'a [u8], at: usize, len: usize) -> usize {
    let mut i = at + 1;
    while i < len && !ends_spec(arg(i)) {
        i += if takes_value(arg(i)) { 2 } else { 1 };
    }
    i.min(len)
}

/// Parses RL.ALL's arguments (`args[0]` is the command name). Keys are only
/// compared, never read: the caller opens them once this has succeeded.
pub fn all_from<'a>(len: usize, arg: impl Fn(usize) -> &'a [u8]) -> Result<AllArgs, ArgError> {
    if len < 3 {
        return Err(ArgError::WrongArity);
    }
    let keys = int_in(arg(1), "numkeys", 1, MAX_KEYS as u64)? as usize;
    if 2 + keys > len {
        return Err(ArgError::KeysExceedArgs);
    }
    // At most MAX_KEYS^2 / 2 comparisons: cheaper than hashing.
    for second in 1..keys {
        if let Some(first) = (0..second).find(|&first| arg(2 + first) == arg(2 + second)) {
            return Err(ArgError::DuplicateKey { first: first + 1, second: second + 1 });
        }
    }

    let mut specs = Vec::with_capacity(keys);
    let mut i = 2 + keys;
    while specs.len() < keys {
        if i >= len {
            return Err(ArgError::TooFewSpecs { keys, specs: specs.len() });
        }
        let word = arg(i);
        if word.eq_ignore_ascii_case(b"PEEK") {
            return Err(if i + 1 == len {
                ArgError::TooFewSpecs { keys, specs: specs.len() }
            } else {
                ArgError::PeekNotLast
            });
        }
        if word.eq_ignore_ascii_case(b"MAXWAIT") {
            return Err(ArgError::TooFewSpecs { keys, specs: specs.len() });
        }
        // The spec runs up to the next spec keyword, PEEK, or the end.
        let end = spec_end(&arg, i, len);
        let spec = parse_spec(word, &arg, i + 1, end)
            .unwrap_or_else(|| Err(ArgError::UnknownLimiter(printable(word), kinds::expected())))
            .map_err(|e| ArgError::InSpec(specs.len() + 1, Box::new(e)))?;
        specs.push(spec);
        i = end;
    }

    // `MAXWAIT ms`, once, after the last spec.
    let mut max_wait_ms = None;
    if i < len && arg(i).eq_ignore_ascii_case(b"MAXWAIT") {
        if i + 1 >= len {
            return Err(ArgError::MissingValue("MAXWAIT"));
        }
        max_wait_ms = Some(max_wait(arg(i + 1))?);
        i += 2;
        if i < len && arg(i).eq_ignore_ascii_case(b"MAXWAIT") {
            return Err(ArgError::Repeated("MAXWAIT"));
        }
        if let Some(n) = specs.iter().position(|s| !s.limit.books()) {
            return Err(ArgError::InSpec(n + 1, Box::new(ArgError::NoMaxWait(BOOKS_ONLY))));
        }
    }
    let peek = match len - i {
        0 => false,
        _ if arg(i).eq_ignore_ascii_case(b"PEEK") => {
            if i + 1 != len {
                return Err(ArgError::PeekNotLast);
            }
            true
        }
        // The only other word that can end the last spec is a keyword.
        _ => return Err(ArgError::TooManySpecs { keys }),
    };
    // A refund is a write: it has no PEEK form.
    if peek && specs.iter().any(|s| s.refund.is_some()) {
        return Err(ArgError::Conflict("REFUND", "PEEK"));
    }
    Ok(AllArgs { specs, max_wait_ms, peek })
}

/// A spec of kind `K`: its grammar over `args[from..end]`, its cost and its refund.
fn spec_of<'a, K: Kind, F: Fn(usize) -> &'a [u8]>(
    arg: F,
    from: usize,
    end: usize,
) -> Result<(K, u64, Option<u64>), ArgError> {
    let (limit, opts) = K::grammar(&mut Cursor::spec(arg, from, end, K::KEYWORD))?;
    Ok((limit, opts.cost, opts.refund))
}

/// Whether the server is asking for the key positions (cluster routing on
/// Redis 7.0, `COMMAND GETKEYS` where no key spec applies) rather than
/// running the command.
pub fn keys_position_request(ctx: Ctx<'_>) -> bool {
    // SAFETY: the command's context (a `Ctx`); checked with `has!` first.
    has!(RedisModule_IsKeysPositionRequest) && unsafe { api!(RedisModule_IsKeysPositionRequest(ctx.raw())) } != 0
}

/// Declares arguments `2..2 + numkeys` as keys, as the command's key spec
/// does, so routing and `COMMAND GETKEYS` agree. A `numkeys` that is not an
/// integer or exceeds the arguments declares no key: the command then runs
/// where it was sent and answers the error itself. (A valid `numkeys` above
/// the RL.ALL maximum is still declared: the keys are bounded by argc, and
/// the command answers that error wherever it is routed.)
pub fn report_keys(ctx: Ctx<'_>, args: &Argv<'_>) {
    let ctx = ctx.raw();
    let Some(after) = args.len().checked_sub(2) else { return };
    let Ok(numkeys) = int_in(args.bytes(1), "numkeys", 0, after as u64) else { return };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{Gcra, SlidingWindow, TokenBucket};

    fn all(line: &str) -> Result<AllArgs, ArgError> {
        let words: Vec<&str> = line.split(' ').collect();
        all_from(words.len(), |i| words[i].as_bytes())
    }

    #[test]
    fn numkeys_is_as_strict_as_every_other_integer() {
        assert_eq!(all("RL.ALL 01 k SLIDE 1 1"), Err(ArgError::NotInteger("numkeys")));
    }

    #[test]
    fn rl_all_takes_one_spec_per_key_in_key_order() {
        let parsed = all("RL.ALL 3 a b c gcra 10 1000 BURST 5 COST 2 TokenBucket 5 1 1000 SLIDE 3 60000 cost 0 PEEK");
        let parsed = parsed.expect("valid");
        assert!(parsed.peek);
        assert_eq!(
            parsed.specs,
            [
                Spec { limit: Limit::Gcra(Gcra::new(10, 1000, 5).unwrap()), cost: 2, refund: None },
                Spec { limit: Limit::TokenBucket(TokenBucket::new(5, 1, 1000).unwrap()), cost: 1, refund: None },
                Spec { limit: Limit::SlidingWindow(SlidingWindow::new(3, 60000)), cost: 0, refund: None },
            ]
        );
        assert_eq!(all("RL.ALL 1 k SLIDE 1 1").map(|a| a.peek), Ok(false));
    }

    #[test]
    fn rl_all_bounds_numkeys_before_reading_any_key() {
        let max = MAX_KEYS as u64;
        assert_eq!(all("RL.ALL 0 k SLIDE 1 1"), Err(ArgError::OutOfRange { arg: "numkeys", min: 1, max }));
        assert_eq!(all("RL.ALL 17 k SLIDE 1 1"), Err(ArgError::OutOfRange { arg: "numkeys", min: 1, max }));
        assert_eq!(all("RL.ALL two k SLIDE 1 1"), Err(ArgError::NotInteger("numkeys")));
        assert_eq!(all("RL.ALL 5 a b c"), Err(ArgError::KeysExceedArgs));
        assert_eq!(all("RL.ALL 1"), Err(ArgError::WrongArity));
    }

    #[test]
    fn rl_all_refuses_repeated_keys_and_miscounted_specs() {
        assert_eq!(
            all("RL.ALL 3 a b a SLIDE 1 1 SLIDE 1 1 SLIDE 1 1"),
            Err(ArgError::DuplicateKey { first: 1, second: 3 })
        );
        assert_eq!(all("RL.ALL 2 a b SLIDE 1 1"), Err(ArgError::TooFewSpecs { keys: 2, specs: 1 }));
        assert_eq!(all("RL.ALL 2 a b SLIDE 1 1 PEEK"), Err(ArgError::TooFewSpecs { keys: 2, specs: 1 }));
        assert_eq!(all("RL.ALL 1 a SLIDE 1 1 GCRA 1 1"), Err(ArgError::TooManySpecs { keys: 1 }));
        assert_eq!(all("RL.ALL 1 a SLIDE 1 1 PEEK COST 1"), Err(ArgError::PeekNotLast));
    }

    #[test]
    fn rl_all_errors_inside_a_spec_say_which_spec() {
        let in_spec = |n, e| Err(ArgError::InSpec(n, Box::new(e)));
        assert_eq!(
            all("RL.ALL 1 a LEAKY 1 1"),
            in_spec(1, ArgError::UnknownLimiter(Some("LEAKY".into()), kinds::expected()))
        );
        assert_eq!(all("RL.ALL 1 a GCRA 1 PEEK"), in_spec(1, ArgError::MissingArg { spec: "GCRA", arg: "period_ms" }));
        assert_eq!(
            all("RL.ALL 2 a b SLIDE 1 1 SLIDE 1 1 BURST 2"),
            in_spec(2, ArgError::UnknownOption(Some("BURST".into())))
        );
        assert_eq!(all("RL.ALL 1 a SLIDE 1 1 COST"), in_spec(1, ArgError::MissingValue("COST")));
        assert_eq!(
            ArgError::InSpec(2, Box::new(ArgError::NotInteger("window_ms"))).to_string(),
            "ERR window_ms is not an integer (spec 2)"
        );
    }

    #[test]
    fn a_spec_refunds_in_place_of_cost_and_never_with_peek() {
        let parsed = all("RL.ALL 2 a b GCRA 10 1000 refund 7 SLIDE 3 1000 COST 2").expect("valid");
        assert_eq!(parsed.specs[0].refund, Some(7));
        assert_eq!((parsed.specs[1].cost, parsed.specs[1].refund), (2, None));
        assert_eq!(
            all("RL.ALL 1 a GCRA 10 1000 REFUND"),
            Err(ArgError::InSpec(1, Box::new(ArgError::MissingValue("REFUND"))))
        );
        assert_eq!(
            all("RL.ALL 1 a GCRA 10 1000 REFUND 1 COST 1"),
            Err(ArgError::InSpec(1, Box::new(ArgError::Conflict("REFUND", "COST"))))
        );
        assert_eq!(
            all("RL.ALL 1 a GCRA 10 1000 REFUND 0"),
            Err(ArgError::InSpec(1, Box::new(ArgError::OutOfRange { arg: "REFUND", min: 1, max: 4294967295 })))
        );
        assert_eq!(all("RL.ALL 2 a b GCRA 10 1000 REFUND 1 SLIDE 1 1 PEEK"), Err(ArgError::Conflict("REFUND", "PEEK")));
        assert_eq!(all("RL.ALL 1 a SLIDE 1 1 PEEK").map(|a| a.peek), Ok(true));
    }

    /// SPEC: the word after COST, REFUND, BURST or TZ is that option's
    /// value even when it spells a keyword (or PEEK): it does not end the spec.
    #[test]
    fn the_word_after_an_option_is_its_value_even_when_it_spells_a_keyword() {
        let in_spec = |n, e| Err(ArgError::InSpec(n, Box::new(e)));
        assert_eq!(all("RL.ALL 1 a SLIDE 1 1 COST GCRA"), in_spec(1, ArgError::NotInteger("COST")));
        assert_eq!(all("RL.ALL 1 a SLIDE 1 1 cost peek"), in_spec(1, ArgError::NotInteger("COST")));
        assert_eq!(all("RL.ALL 1 a GCRA 10 1000 REFUND SLIDE"), in_spec(1, ArgError::NotInteger("REFUND")));
        assert_eq!(all("RL.ALL 1 a GCRA 10 1000 BURST TOKENBUCKET"), in_spec(1, ArgError::NotInteger("BURST")));
        assert_eq!(
            all("RL.ALL 2 a b GCRA 10 1000 COST 1 SLIDE 1 1 COST QUOTA"),
            in_spec(2, ArgError::NotInteger("COST"))
        );
        // The specs after a value are found as before.
        let parsed = all("RL.ALL 2 a b GCRA 10 1000 COST 2 SLIDE 3 1000 PEEK").expect("valid");
        assert_eq!((parsed.specs.len(), parsed.specs[0].cost, parsed.peek), (2, 2, true));
        // A zone is a word like any other: the kind's grammar judges it.
        assert_eq!(
            all("RL.ALL 2 a b QUOTA 10 DAY TZ GCRA GCRA 1 1000"),
            in_spec(1, ArgError::UnknownZone(Some("GCRA".into())))
        );
    }

    #[test]
    fn maxwait_follows_the_last_spec_and_only_where_every_limit_books() {
        let parsed = all("RL.ALL 2 a b GCRA 10 1000 TOKENBUCKET 5 1 1000 COST 2 maxwait 500 PEEK").expect("valid");
        assert_eq!((parsed.specs.len(), parsed.max_wait_ms, parsed.peek), (2, Some(500), true));
        assert_eq!(all("RL.ALL 1 a GCRA 10 1000 MAXWAIT 0").map(|a| a.max_wait_ms), Ok(Some(0)));
        assert_eq!(all("RL.ALL 1 a GCRA 10 1000").map(|a| a.max_wait_ms), Ok(None));
        // A refund spec books nothing but may ride along.
        assert!(all("RL.ALL 2 a b GCRA 10 1000 GCRA 5 1000 REFUND 1 MAXWAIT 10").is_ok());
        let no = |n| Err(ArgError::InSpec(n, Box::new(ArgError::NoMaxWait(BOOKS_ONLY))));
        assert_eq!(all("RL.ALL 2 a b GCRA 10 1000 SLIDE 3 1000 MAXWAIT 10"), no(2));
        assert_eq!(all("RL.ALL 1 a CONCURRENCY 3 1000 MAXWAIT 10"), no(1));
        // Before the last spec, twice, without or with a bad value.
        assert_eq!(
            all("RL.ALL 2 a b GCRA 10 1000 MAXWAIT 10 GCRA 1 1"),
            Err(ArgError::TooFewSpecs { keys: 2, specs: 1 })
        );
        assert_eq!(all("RL.ALL 1 a GCRA 10 1000 MAXWAIT 1 MAXWAIT 1"), Err(ArgError::Repeated("MAXWAIT")));
        assert_eq!(all("RL.ALL 1 a GCRA 10 1000 MAXWAIT"), Err(ArgError::MissingValue("MAXWAIT")));
        assert_eq!(
            all("RL.ALL 1 a GCRA 10 1000 MAXWAIT 1000001"),
            Err(ArgError::OutOfRange { arg: "MAXWAIT", min: 0, max: 1_000_000 })
        );
        assert_eq!(all("RL.ALL 1 a GCRA 10 1000 PEEK MAXWAIT 1"), Err(ArgError::PeekNotLast));
    }

    #[test]
    fn an_unknown_limiter_lists_every_kind() {
        let e = all("RL.ALL 1 a LEAKY 1 1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "ERR syntax error: unknown limiter 'LEAKY' (expected GCRA, TOKENBUCKET, SLIDE, LOG, QUOTA or CONCURRENCY) (spec 1)"
        );
    }
}
