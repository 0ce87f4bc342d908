//! Argument parsing and the texts of every argument error.
//!
//! Integers are strict decimal, as Redis's `string2ll` reads them: optional
//! `-`, digits only, no leading zero. Anything else (`10.5`, `abc`, `1e3`,
//! ` 5`, `5 `, `+5`, `007`, `-0`, non-UTF-8 bytes) is "not an integer"; a
//! well-formed integer outside the argument's range (`-1`, `0`, `2^64`) is
//! "out of range". Errors name the argument and never echo client bytes
//! except short printable option names.

use std::fmt;

use crate::core::time::{MAX_COUNT, MAX_PERIOD_MS};
use crate::core::{Gcra, ParamError, SlidingWindow, TokenBucket};

use super::ffi::Argv;

/// Why a call's arguments were refused. Nothing is read or written before
/// the arguments are fully parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgError {
    WrongArity,
    NotInteger(&'static str),
    OutOfRange {
        arg: &'static str,
        min: u64,
        max: u64,
    },
    UnknownOption(Option<String>),
    Repeated(&'static str),
    MissingValue(&'static str),
    Param(ParamError),
    /// RL.ALL: `numkeys` names more keys than there are arguments after it.
    KeysExceedArgs,
    /// RL.ALL: key number `second` (1-based) repeats key number `first`.
    DuplicateKey {
        first: usize,
        second: usize,
    },
    /// RL.ALL: the specs end before there is one per key.
    TooFewSpecs {
        keys: usize,
        specs: usize,
    },
    /// RL.ALL: another spec follows the last key's spec.
    TooManySpecs {
        keys: usize,
    },
    /// RL.ALL: a spec starts with a word that names no algorithm.
    UnknownLimiter(Option<String>),
    /// RL.ALL: a spec ends before one of its positional arguments.
    MissingArg {
        spec: &'static str,
        arg: &'static str,
    },
    /// RL.ALL: `PEEK` is somewhere other than last.
    PeekNotLast,
    /// RL.ALL: an error inside spec number `.0` (1-based), so the client
    /// knows which of several `limit`s is meant.
    InSpec(usize, Box<ArgError>),
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgError::WrongArity => write!(f, "ERR wrong number of arguments"),
            ArgError::NotInteger(arg) => write!(f, "ERR {arg} is not an integer"),
            ArgError::OutOfRange { arg, min, max } => {
                write!(f, "ERR {arg} is out of range (must be {min} to {max})")
            }
            ArgError::UnknownOption(Some(name)) => write!(f, "ERR syntax error: unknown option '{name}'"),
            ArgError::UnknownOption(None) => write!(f, "ERR syntax error: unknown option"),
            ArgError::Repeated(arg) => write!(f, "ERR syntax error: {arg} given more than once"),
            ArgError::MissingValue(arg) => write!(f, "ERR syntax error: {arg} needs a value"),
            ArgError::Param(p) => write!(f, "ERR {} is out of range: {}", p.arg, p.reason),
            ArgError::KeysExceedArgs => write!(f, "ERR numkeys is greater than the number of arguments after it"),
            ArgError::DuplicateKey { first, second } => {
                write!(f, "ERR key {second} is the same as key {first}: each key may appear only once")
            }
            ArgError::TooFewSpecs { keys, specs } => {
                write!(f, "ERR syntax error: one spec per key is needed (numkeys is {keys}, found {specs} specs)")
            }
            ArgError::TooManySpecs { keys } => {
                write!(f, "ERR syntax error: one spec per key is needed (numkeys is {keys}, found more specs)")
            }
            ArgError::UnknownLimiter(Some(name)) => {
                write!(f, "ERR syntax error: unknown limiter '{name}' (expected GCRA, TOKENBUCKET or SLIDE)")
            }
            ArgError::UnknownLimiter(None) => {
                write!(f, "ERR syntax error: unknown limiter (expected GCRA, TOKENBUCKET or SLIDE)")
            }
            ArgError::MissingArg { spec, arg } => write!(f, "ERR syntax error: {spec} needs {arg}"),
            ArgError::PeekNotLast => write!(f, "ERR syntax error: PEEK must be the last argument"),
            ArgError::InSpec(n, e) => write!(f, "{e} (spec {n})"),
        }
    }
}

impl From<ParamError> for ArgError {
    fn from(p: ParamError) -> Self {
        ArgError::Param(p)
    }
}

/// A strict decimal integer, or why not. Values beyond `u64` are reported as
/// `u64::MAX` (they are out of every range), negatives as `None` in `Ok`.
fn parse_integer(bytes: &[u8]) -> Result<Option<u64>, ()> {
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(());
    }
    // As Redis's string2ll: no leading zero ("007"), no "-0"; "0" alone is 0.
    if digits[0] == b'0' && (digits.len() > 1 || negative) {
        return Err(());
    }
    let value = digits
        .iter()
        .try_fold(0u64, |acc, d| acc.checked_mul(10)?.checked_add(u64::from(d - b'0')))
        .unwrap_or(u64::MAX);
    Ok(if negative && value != 0 { None } else { Some(value) })
}

/// Parses an integer argument that must lie in `min..=max`.
pub fn int_in(bytes: &[u8], arg: &'static str, min: u64, max: u64) -> Result<u64, ArgError> {
    match parse_integer(bytes) {
        Err(()) => Err(ArgError::NotInteger(arg)),
        Ok(Some(v)) if (min..=max).contains(&v) => Ok(v),
        Ok(_) => Err(ArgError::OutOfRange { arg, min, max }),
    }
}

/// A count (`limit`, `BURST`, `capacity`, `refill_tokens`): 1 to 2^32-1.
pub fn count(bytes: &[u8], arg: &'static str) -> Result<u64, ArgError> {
    int_in(bytes, arg, 1, MAX_COUNT)
}

/// A duration in ms (`period_ms`, `refill_period_ms`, `window_ms`): 1 to 10^12.
pub fn period(bytes: &[u8], arg: &'static str) -> Result<u64, ArgError> {
    int_in(bytes, arg, 1, MAX_PERIOD_MS)
}

/// `COST n`: 0 to 2^32-1.
pub fn cost(bytes: &[u8]) -> Result<u64, ArgError> {
    int_in(bytes, "COST", 0, MAX_COUNT)
}

/// The options a command accepts after its positional arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub burst: Option<u64>,
    pub cost: u64,
    pub peek: bool,
}

/// Which options a command accepts.
#[derive(Debug, Clone, Copy)]
pub struct Accepts {
    pub burst: bool,
    pub peek: bool,
}

/// Parses `[BURST n] [COST n] [PEEK]` (those accepted), case-insensitive, in
/// any order, each at most once, from `args[from..]`.
pub fn options(args: &Argv<'_>, from: usize, accepts: Accepts) -> Result<Options, ArgError> {
    options_from(args.len(), |i| args.bytes(i), from, accepts)
}

/// [`options`] over any byte source, so it can be tested without a server.
pub fn options_from<'a>(
    len: usize,
    arg: impl Fn(usize) -> &'a [u8],
    from: usize,
    accepts: Accepts,
) -> Result<Options, ArgError> {
    let mut opts = Options { burst: None, cost: 1, peek: false };
    let mut cost_seen = false;
    let mut i = from;
    while i < len {
        let word = arg(i);
        let value = |name: &'static str| -> Result<&'a [u8], ArgError> {
            if i + 1 < len {
                Ok(arg(i + 1))
            } else {
                Err(ArgError::MissingValue(name))
            }
        };
        if accepts.burst && word.eq_ignore_ascii_case(b"BURST") {
            if opts.burst.is_some() {
                return Err(ArgError::Repeated("BURST"));
            }
            opts.burst = Some(count(value("BURST")?, "BURST")?);
            i += 2;
        } else if word.eq_ignore_ascii_case(b"COST") {
            if cost_seen {
                return Err(ArgError::Repeated("COST"));
            }
            opts.cost = cost(value("COST")?)?;
            cost_seen = true;
            i += 2;
        } else if accepts.peek && word.eq_ignore_ascii_case(b"PEEK") {
            if opts.peek {
                return Err(ArgError::Repeated("PEEK"));
            }
            opts.peek = true;
            i += 1;
        } else {
            return Err(ArgError::UnknownOption(printable(word)));
        }
    }
    Ok(opts)
}

/// The most keys one RL.ALL call may name. A bound, so that no argument can
/// make a call allocate or hold open an unbounded number of keys; several
/// limits per request (user, tenant, global, one per resource) stay far below it.
pub const MAX_KEYS: usize = 16;

/// One limit of an RL.ALL call: its algorithm with validated parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Gcra(Gcra),
    TokenBucket(TokenBucket),
    Slide(SlidingWindow),
}

/// One spec of an RL.ALL call: the limit and the cost to take from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub limit: Limit,
    pub cost: u64,
}

/// A parsed `RL.ALL numkeys key [key ...] spec [spec ...] [PEEK]`. The keys
/// are arguments `2..2 + specs.len()`, spec `i` belonging to key `i`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllArgs {
    pub specs: Vec<Spec>,
    pub peek: bool,
}

/// The words that start a spec.
const ALGORITHMS: [&[u8]; 3] = [b"GCRA", b"TOKENBUCKET", b"SLIDE"];

/// A spec keyword or PEEK: where one spec's options end.
fn ends_spec(word: &[u8]) -> bool {
    word.eq_ignore_ascii_case(b"PEEK") || ALGORITHMS.iter().any(|a| word.eq_ignore_ascii_case(a))
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
        // The spec runs up to the next spec keyword, PEEK, or the end.
        let end = (i + 1..len).find(|&j| ends_spec(arg(j))).unwrap_or(len);
        let spec = spec_from(word, i + 1, end, &arg).map_err(|e| ArgError::InSpec(specs.len() + 1, Box::new(e)))?;
        specs.push(spec);
        i = end;
    }

    let peek = match len - i {
        0 => false,
        _ if arg(i).eq_ignore_ascii_case(b"PEEK") => {
            if i + 1 != len {
                return Err(ArgError::PeekNotLast);
            }
            true
        }
        // The only other word that can end the last spec is an algorithm.
        _ => return Err(ArgError::TooManySpecs { keys }),
    };
    Ok(AllArgs { specs, peek })
}

/// One spec: `word` is its algorithm, its arguments are `args[from..end]`.
fn spec_from<'a>(word: &[u8], from: usize, end: usize, arg: &impl Fn(usize) -> &'a [u8]) -> Result<Spec, ArgError> {
    // The n-th positional argument, which must come before the spec's end.
    let positional = |n: usize, spec: &'static str, name: &'static str| -> Result<&'a [u8], ArgError> {
        if from + n < end {
            Ok(arg(from + n))
        } else {
            Err(ArgError::MissingArg { spec, arg: name })
        }
    };
    let (limit, opts) = if word.eq_ignore_ascii_case(b"GCRA") {
        let limit = count(positional(0, "GCRA", "limit")?, "limit")?;
        let period = period(positional(1, "GCRA", "period_ms")?, "period_ms")?;
        let opts = options_from(end, arg, from + 2, Accepts { burst: true, peek: false })?;
        (Limit::Gcra(Gcra::new(limit, period, opts.burst.unwrap_or(limit))?), opts)
    } else if word.eq_ignore_ascii_case(b"TOKENBUCKET") {
        let capacity = count(positional(0, "TOKENBUCKET", "capacity")?, "capacity")?;
        let refill_tokens = count(positional(1, "TOKENBUCKET", "refill_tokens")?, "refill_tokens")?;
        let refill_period = period(positional(2, "TOKENBUCKET", "refill_period_ms")?, "refill_period_ms")?;
        let opts = options_from(end, arg, from + 3, Accepts { burst: false, peek: false })?;
        (Limit::TokenBucket(TokenBucket::new(capacity, refill_tokens, refill_period)?), opts)
    } else if word.eq_ignore_ascii_case(b"SLIDE") {
        let limit = count(positional(0, "SLIDE", "limit")?, "limit")?;
        let window = period(positional(1, "SLIDE", "window_ms")?, "window_ms")?;
        let opts = options_from(end, arg, from + 2, Accepts { burst: false, peek: false })?;
        (Limit::Slide(SlidingWindow::new(limit, window)), opts)
    } else {
        return Err(ArgError::UnknownLimiter(printable(word)));
    };
    Ok(Spec { limit, cost: opts.cost })
}

/// The option name as the client sent it, if it is short printable ASCII.
fn printable(word: &[u8]) -> Option<String> {
    (!word.is_empty() && word.len() <= 32 && word.iter().all(|b| b.is_ascii_graphic()))
        .then(|| String::from_utf8_lossy(word).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Accepts = Accepts { burst: true, peek: true };

    fn opts(words: &[&str]) -> Result<Options, ArgError> {
        options_from(words.len(), |i| words[i].as_bytes(), 0, ALL)
    }

    #[test]
    fn integers_are_strict_decimal() {
        let cases: &[(&[u8], Result<u64, ArgError>)] = &[
            (b"1", Ok(1)),
            (b"4294967295", Ok(4294967295)),
            (b"4294967296", Err(ArgError::OutOfRange { arg: "limit", min: 1, max: 4294967295 })),
            (b"0", Err(ArgError::OutOfRange { arg: "limit", min: 1, max: 4294967295 })),
            (b"-1", Err(ArgError::OutOfRange { arg: "limit", min: 1, max: 4294967295 })),
            (b"-0", Err(ArgError::NotInteger("limit"))),
            (b"007", Err(ArgError::NotInteger("limit"))),
            (b"01", Err(ArgError::NotInteger("limit"))),
            (b"00", Err(ArgError::NotInteger("limit"))),
            (b"-01", Err(ArgError::NotInteger("limit"))),
            (b"1 ", Err(ArgError::NotInteger("limit"))),
            (b"10", Ok(10)),
            (b"-5", Err(ArgError::OutOfRange { arg: "limit", min: 1, max: 4294967295 })),
            (b"99999999999999999999999999", Err(ArgError::OutOfRange { arg: "limit", min: 1, max: 4294967295 })),
            (b"10.5", Err(ArgError::NotInteger("limit"))),
            (b"abc", Err(ArgError::NotInteger("limit"))),
            (b"", Err(ArgError::NotInteger("limit"))),
            (b"-", Err(ArgError::NotInteger("limit"))),
            (b"+5", Err(ArgError::NotInteger("limit"))),
            (b" 5", Err(ArgError::NotInteger("limit"))),
            (b"1e3", Err(ArgError::NotInteger("limit"))),
            (b"\xff\xfe", Err(ArgError::NotInteger("limit"))),
        ];
        for (input, want) in cases {
            assert_eq!(&count(input, "limit"), want, "input {:?}", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn zero_is_an_integer_but_not_with_a_sign_or_leading_zeros() {
        assert_eq!(cost(b"0"), Ok(0));
        assert_eq!(cost(b"-0"), Err(ArgError::NotInteger("COST")));
        assert_eq!(cost(b"00"), Err(ArgError::NotInteger("COST")));
        assert_eq!(cost(b"+0"), Err(ArgError::NotInteger("COST")));
        assert_eq!(all("RL.ALL 01 k SLIDE 1 1"), Err(ArgError::NotInteger("numkeys")));
    }

    #[test]
    fn options_are_case_insensitive_in_any_order() {
        assert_eq!(opts(&[]), Ok(Options { burst: None, cost: 1, peek: false }));
        assert_eq!(opts(&["peek", "Cost", "0", "burst", "7"]), Ok(Options { burst: Some(7), cost: 0, peek: true }));
    }

    #[test]
    fn options_may_appear_at_most_once() {
        assert_eq!(opts(&["COST", "1", "cost", "2"]), Err(ArgError::Repeated("COST")));
        assert_eq!(opts(&["PEEK", "PEEK"]), Err(ArgError::Repeated("PEEK")));
        assert_eq!(opts(&["BURST", "1", "BURST", "1"]), Err(ArgError::Repeated("BURST")));
    }

    #[test]
    fn option_errors_name_the_option() {
        assert_eq!(opts(&["COST"]), Err(ArgError::MissingValue("COST")));
        assert_eq!(opts(&["BURST", "0"]), Err(ArgError::OutOfRange { arg: "BURST", min: 1, max: 4294967295 }));
        assert_eq!(opts(&["COST", "-1"]), Err(ArgError::OutOfRange { arg: "COST", min: 0, max: 4294967295 }));
        assert_eq!(opts(&["FOO"]), Err(ArgError::UnknownOption(Some("FOO".into()))));
        assert_eq!(opts(&["a\r\nb"]), Err(ArgError::UnknownOption(None)));
    }

    #[test]
    fn options_a_command_does_not_take_are_unknown() {
        let words = ["BURST", "3"];
        let r = options_from(2, |i| words[i].as_bytes(), 0, Accepts { burst: false, peek: true });
        assert_eq!(r, Err(ArgError::UnknownOption(Some("BURST".into()))));
    }

    fn all(line: &str) -> Result<AllArgs, ArgError> {
        let words: Vec<&str> = line.split(' ').collect();
        all_from(words.len(), |i| words[i].as_bytes())
    }

    #[test]
    fn rl_all_takes_one_spec_per_key_in_key_order() {
        let parsed = all("RL.ALL 3 a b c gcra 10 1000 BURST 5 COST 2 TokenBucket 5 1 1000 SLIDE 3 60000 cost 0 PEEK");
        let parsed = parsed.expect("valid");
        assert!(parsed.peek);
        assert_eq!(
            parsed.specs,
            [
                Spec { limit: Limit::Gcra(Gcra::new(10, 1000, 5).unwrap()), cost: 2 },
                Spec { limit: Limit::TokenBucket(TokenBucket::new(5, 1, 1000).unwrap()), cost: 1 },
                Spec { limit: Limit::Slide(SlidingWindow::new(3, 60000)), cost: 0 },
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
        assert_eq!(all("RL.ALL 1 a LEAKY 1 1"), in_spec(1, ArgError::UnknownLimiter(Some("LEAKY".into()))));
        assert_eq!(all("RL.ALL 1 a GCRA 1 PEEK"), in_spec(1, ArgError::MissingArg { spec: "GCRA", arg: "period_ms" }));
        assert_eq!(
            all("RL.ALL 2 a b SLIDE 1 1 SLIDE 1 1 BURST 2"),
            in_spec(2, ArgError::UnknownOption(Some("BURST".into())))
        );
        assert_eq!(all("RL.ALL 1 a SLIDE 1 1 COST GCRA"), in_spec(1, ArgError::MissingValue("COST")));
        assert_eq!(
            ArgError::InSpec(2, Box::new(ArgError::NotInteger("window_ms"))).to_string(),
            "ERR window_ms is not an integer (spec 2)"
        );
    }

    #[test]
    fn error_texts_start_with_err_and_name_the_argument() {
        assert_eq!(ArgError::NotInteger("period_ms").to_string(), "ERR period_ms is not an integer");
        assert_eq!(
            ArgError::OutOfRange { arg: "window_ms", min: 1, max: 1_000_000_000_000 }.to_string(),
            "ERR window_ms is out of range (must be 1 to 1000000000000)"
        );
    }
}
