//! Argument parsing and the texts of every argument error.
//!
//! Integers are strict decimal, as Redis's `string2ll` reads them: optional
//! `-`, digits only, no leading zero. Anything else (`10.5`, `abc`, `1e3`,
//! ` 5`, `5 `, `+5`, `007`, `-0`, non-UTF-8 bytes) is "not an integer"; a
//! well-formed integer outside the argument's range (`-1`, `0`, `2^64`) is
//! "out of range". Errors name the argument and never echo client bytes
//! except short printable option names.

use std::fmt;
use std::marker::PhantomData;

use crate::core::lease::{LeaseId, MAX_ID_LEN};
use crate::core::time::{MAX_COUNT, MAX_PERIOD_MS, NS_PER_MS};
use crate::core::ParamError;

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
    /// Two options that exclude each other (`REFUND` with `COST` or `PEEK`).
    Conflict(&'static str, &'static str),
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
    /// RL.ALL, RL.PEEK: a word that names no kind (`.0`, if printable);
    /// `.1` lists the kinds.
    UnknownLimiter(Option<String>, String),
    /// RL.ALL: a spec ends before one of its positional arguments.
    MissingArg {
        spec: &'static str,
        arg: &'static str,
    },
    /// RL.ALL: `PEEK` is somewhere other than last.
    PeekNotLast,
    /// `TZ` names no zone of the bundled database (`.0`, if printable).
    UnknownZone(Option<String>),
    /// `TZ` with a period in ms.
    ZoneNeedsCalendar,
    /// A lease id (`ID id`, `RL.RELEASE`'s and `RL.RENEW`'s `id`) that is
    /// empty or longer than 128 bytes.
    IdLength(&'static str),
    /// `WAIT` where the command does not wait (`RL.ALL`, `RL.PEEK`): why.
    NoWait(&'static str),
    /// `MAXWAIT` where nothing books (a kind other than GCRA and the token
    /// bucket, inside an RL.ALL spec): why.
    NoMaxWait(&'static str),
    /// A duration given with a unit (`1s`): `ms`, what it is in ms.
    DurationUnit {
        arg: &'static str,
        ms: Option<u64>,
    },
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
            ArgError::IdLength(arg) => write!(f, "ERR {arg} must be 1 to {MAX_ID_LEN} bytes"),
            ArgError::NoWait(why) => write!(f, "ERR syntax error: WAIT is not accepted here: {why}"),
            ArgError::NoMaxWait(why) => write!(f, "ERR syntax error: MAXWAIT is not accepted here: {why}"),
            ArgError::DurationUnit { arg, ms: Some(ms) } => {
                write!(f, "ERR {arg} is not an integer: durations are whole milliseconds (that is {ms})")
            }
            ArgError::DurationUnit { arg, ms: None } => {
                write!(f, "ERR {arg} is not an integer: durations are whole milliseconds")
            }
            ArgError::Conflict(a, b) => write!(f, "ERR syntax error: {a} cannot be combined with {b}"),
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
            ArgError::UnknownLimiter(Some(name), expected) => {
                write!(f, "ERR syntax error: unknown limiter '{name}' (expected {expected})")
            }
            ArgError::UnknownLimiter(None, expected) => {
                write!(f, "ERR syntax error: unknown limiter (expected {expected})")
            }
            ArgError::MissingArg { spec, arg } => write!(f, "ERR syntax error: {spec} needs {arg}"),
            ArgError::PeekNotLast => write!(f, "ERR syntax error: PEEK must be the last argument"),
            ArgError::UnknownZone(Some(name)) => write!(f, "ERR TZ: unknown time zone '{name}'"),
            ArgError::UnknownZone(None) => write!(f, "ERR TZ: unknown time zone"),
            ArgError::ZoneNeedsCalendar => write!(f, "ERR TZ applies only to HOUR, DAY, WEEK, MONTH or YEAR"),
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
    // As Redis's string2ll: no leading zero ("007"), no "-0"; "0" alone is 0.
    match digits {
        [] => return Err(()),
        [b'0', _, ..] => return Err(()),
        [b'0'] if negative => return Err(()),
        _ => {}
    }
    // One pass. 19 digits are below 10^19 < 2^64, so they never overflow
    // (the wrapping operations never wrap); a longer number saturates.
    let mut value = 0u64;
    if digits.len() <= 19 {
        for &d in digits {
            let digit = d.wrapping_sub(b'0');
            if digit > 9 {
                return Err(());
            }
            value = value.wrapping_mul(10).wrapping_add(u64::from(digit));
        }
    } else {
        for &d in digits {
            let digit = d.wrapping_sub(b'0');
            if digit > 9 {
                return Err(());
            }
            value = value.saturating_mul(10).saturating_add(u64::from(digit));
        }
    }
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
    int_in(bytes, arg, 1, MAX_PERIOD_MS).map_err(|e| match e {
        ArgError::NotInteger(_) => with_unit(bytes).map_or(e, |ms| ArgError::DurationUnit { arg, ms }),
        e => e,
    })
}

/// What a duration written with a unit (`1s`, `250ms`, `10m`, `2h`, `1d`)
/// is in milliseconds, for the error that says durations are integer ms.
fn with_unit(bytes: &[u8]) -> Option<Option<u64>> {
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    let (n, unit) = bytes.split_at(digits);
    if n.is_empty() || unit.is_empty() || unit.len() > 3 {
        return None;
    }
    let per: u64 = match unit.to_ascii_lowercase().as_slice() {
        b"ms" => 1,
        b"s" | b"sec" => 1_000,
        b"m" | b"min" => 60_000,
        b"h" => 3_600_000,
        b"d" => 86_400_000,
        _ => return None,
    };
    // The value in ms if it is one (else the hint names no number).
    Some(std::str::from_utf8(n).ok()?.parse::<u64>().ok().and_then(|n| n.checked_mul(per)))
}

/// A lease id, `name` in errors: 1 to 128 bytes, any bytes.
pub fn id(bytes: &[u8], name: &'static str) -> Result<LeaseId, ArgError> {
    LeaseId::new(bytes).ok_or(ArgError::IdLength(name))
}

/// `COST n`: 0 to 2^32-1.
pub fn cost(bytes: &[u8]) -> Result<u64, ArgError> {
    int_in(bytes, "COST", 0, MAX_COUNT)
}

/// `REFUND n`: 1 to 2^32-1.
pub fn refund(bytes: &[u8]) -> Result<u64, ArgError> {
    int_in(bytes, "REFUND", 1, MAX_COUNT)
}

/// The options a command accepts after its positional arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub burst: Option<u64>,
    /// `COST n` (default 1); meaningless when `refund` is set.
    pub cost: u64,
    /// `REFUND n`, in place of `COST`: the units to give back.
    pub refund: Option<u64>,
    pub peek: bool,
    /// `WAIT timeout_ms` (RL.ACQUIRE only): block until the lease is granted.
    pub wait_ms: Option<u64>,
    /// `MAXWAIT ms` (GCRA, the token bucket): book a start within `ms`.
    pub max_wait_ms: Option<u64>,
}

/// Why `MAXWAIT` is refused on a kind that does not book.
pub const BOOKS_ONLY: &str = "only GCRA and TOKENBUCKET book a start (RL.ACQUIRE waits with WAIT)";

/// The one argument cursor: every kind's grammar reads its arguments
/// through it, whether they follow the kind's own command, `RL.PEEK` or a
/// spec of `RL.ALL`, so each grammar is written once. What differs is how
/// a missing positional is reported and whether `PEEK` is an option.
pub struct Cursor<'a, F> {
    arg: F,
    at: usize,
    end: usize,
    /// `RL.ALL`: the spec's keyword, for [`ArgError::MissingArg`]; `None`
    /// for a command, whose arity was checked up front.
    spec: Option<&'static str>,
    /// Whether `PEEK` is one of the options.
    peek: bool,
    /// Whether `REFUND` is one of the options.
    refund: bool,
    /// Whether `MAXWAIT` is (the booking kinds, outside RL.ALL's specs).
    booking: bool,
    bytes: PhantomData<&'a [u8]>,
}

impl<'a, F: Fn(usize) -> &'a [u8]> Cursor<'a, F> {
    /// A command's arguments `from..len`, of which the first `positionals`
    /// are required: fewer is [`ArgError::WrongArity`], before anything is
    /// parsed. `peek`: whether the command takes `PEEK` and `REFUND` (a
    /// kind's own command takes both, `RL.PEEK` neither).
    pub fn command(len: usize, arg: F, from: usize, positionals: usize, peek: bool) -> Result<Self, ArgError> {
        if len < from + positionals {
            return Err(ArgError::WrongArity);
        }
        Ok(Self { arg, at: from, end: len, spec: None, peek, refund: peek, booking: false, bytes: PhantomData })
    }

    /// The arguments `from..end` of an `RL.ALL` spec that starts with `keyword`.
    pub fn spec(arg: F, from: usize, end: usize, keyword: &'static str) -> Self {
        Self { arg, at: from, end, spec: Some(keyword), peek: false, refund: true, booking: false, bytes: PhantomData }
    }

    /// The next positional argument, `name`.
    pub fn next_arg(&mut self, name: &'static str) -> Result<&'a [u8], ArgError> {
        if self.at >= self.end {
            return Err(match self.spec {
                Some(spec) => ArgError::MissingArg { spec, arg: name },
                None => ArgError::WrongArity,
            });
        }
        self.at += 1;
        Ok((self.arg)(self.at - 1))
    }

    /// The next positional, a count ([`count`]).
    pub fn next_count(&mut self, name: &'static str) -> Result<u64, ArgError> {
        count(self.next_arg(name)?, name)
    }

    /// The next positional, an integer in `min..=max`.
    pub fn next_int_in(&mut self, name: &'static str, min: u64, max: u64) -> Result<u64, ArgError> {
        int_in(self.next_arg(name)?, name, min, max)
    }

    /// The next positional, a duration in ms ([`period`]).
    pub fn next_period(&mut self, name: &'static str) -> Result<u64, ArgError> {
        period(self.next_arg(name)?, name)
    }

    /// The rest: `[BURST n] [COST n | REFUND n] [PEEK]` (BURST if `burst`,
    /// REFUND and PEEK if the cursor takes them), case-insensitive, in any
    /// order, each at most once; `REFUND` with `COST` or `PEEK` is an error.
    pub fn options(&mut self, burst: bool) -> Result<Options, ArgError> {
        self.parse_options(burst, None).map(|(opts, _)| opts)
    }

    /// [`options`](Self::options) and `[MAXWAIT ms]` (0 to 10^6), except in
    /// an RL.ALL spec, where `MAXWAIT` ends the specs. `REFUND` with it is an
    /// error.
    pub fn options_with_booking(&mut self, burst: bool) -> Result<Options, ArgError> {
        self.booking = self.spec.is_none();
        self.options(burst)
    }

    /// The rest: `[TZ zone] [COST n] [PEEK]` (PEEK if the cursor takes it),
    /// as [`options`](Self::options), and the zone's name as given. The word
    /// after `TZ` is always its value.
    pub fn options_with_tz(&mut self) -> Result<(Options, Option<&'a [u8]>), ArgError> {
        self.parse_options(false, Some("TZ"))
    }

    /// The rest: `[COST n] [ID id] [PEEK]` (PEEK if the cursor takes it;
    /// never REFUND), and the id as given. The word after `ID` is always
    /// its value.
    pub fn options_with_id(&mut self) -> Result<(Options, Option<&'a [u8]>), ArgError> {
        self.refund = false;
        self.parse_options(false, Some("ID"))
    }

    /// `extra`: an option that takes any word as its value (`TZ`, `ID`).
    fn parse_options(
        &mut self,
        burst: bool,
        extra: Option<&'static str>,
    ) -> Result<(Options, Option<&'a [u8]>), ArgError> {
        let (len, arg) = (self.end, &self.arg);
        let mut opts = Options { burst: None, cost: 1, refund: None, peek: false, wait_ms: None, max_wait_ms: None };
        // The value of `extra`.
        let mut zone = None;
        let mut cost_seen = false;
        let mut i = self.at;
        while i < len {
            let word = arg(i);
            let value = |name: &'static str| -> Result<&'a [u8], ArgError> {
                if i + 1 < len {
                    Ok(arg(i + 1))
                } else {
                    Err(ArgError::MissingValue(name))
                }
            };
            if burst && word.eq_ignore_ascii_case(b"BURST") {
                if opts.burst.is_some() {
                    return Err(ArgError::Repeated("BURST"));
                }
                opts.burst = Some(count(value("BURST")?, "BURST")?);
                i += 2;
            } else if let Some(name) = extra.filter(|name| word.eq_ignore_ascii_case(name.as_bytes())) {
                if zone.is_some() {
                    return Err(ArgError::Repeated(name));
                }
                zone = Some(value(name)?);
                i += 2;
            } else if word.eq_ignore_ascii_case(b"COST") {
                if cost_seen {
                    return Err(ArgError::Repeated("COST"));
                }
                if opts.refund.is_some() {
                    return Err(ArgError::Conflict("REFUND", "COST"));
                }
                opts.cost = cost(value("COST")?)?;
                cost_seen = true;
                i += 2;
            } else if self.refund && word.eq_ignore_ascii_case(b"REFUND") {
                if opts.refund.is_some() {
                    return Err(ArgError::Repeated("REFUND"));
                }
                if cost_seen {
                    return Err(ArgError::Conflict("REFUND", "COST"));
                }
                if opts.peek {
                    return Err(ArgError::Conflict("REFUND", "PEEK"));
                }
                if opts.max_wait_ms.is_some() {
                    return Err(ArgError::Conflict("REFUND", "MAXWAIT"));
                }
                opts.refund = Some(refund(value("REFUND")?)?);
                i += 2;
            } else if word.eq_ignore_ascii_case(b"MAXWAIT") {
                if !self.booking {
                    return Err(ArgError::NoMaxWait(BOOKS_ONLY));
                }
                if opts.max_wait_ms.is_some() {
                    return Err(ArgError::Repeated("MAXWAIT"));
                }
                if opts.refund.is_some() {
                    return Err(ArgError::Conflict("REFUND", "MAXWAIT"));
                }
                opts.max_wait_ms = Some(max_wait(value("MAXWAIT")?)?);
                i += 2;
            } else if extra == Some("ID") && word.eq_ignore_ascii_case(b"WAIT") {
                // The concurrency grammar: only its own command waits.
                if self.spec.is_some() {
                    return Err(ArgError::NoWait("RL.ALL does not wait"));
                }
                if !self.peek {
                    return Err(ArgError::NoWait("RL.PEEK does not wait"));
                }
                if opts.wait_ms.is_some() {
                    return Err(ArgError::Repeated("WAIT"));
                }
                if opts.peek {
                    return Err(ArgError::Conflict("WAIT", "PEEK"));
                }
                opts.wait_ms = Some(int_in(value("WAIT")?, "timeout_ms", 1, MAX_WAIT_MS)?);
                i += 2;
            } else if self.peek && word.eq_ignore_ascii_case(b"PEEK") {
                if opts.peek {
                    return Err(ArgError::Repeated("PEEK"));
                }
                if opts.refund.is_some() {
                    return Err(ArgError::Conflict("REFUND", "PEEK"));
                }
                if opts.wait_ms.is_some() {
                    return Err(ArgError::Conflict("WAIT", "PEEK"));
                }
                opts.peek = true;
                i += 1;
            } else {
                return Err(ArgError::UnknownOption(printable(word)));
            }
        }
        self.at = len;
        Ok((opts, zone))
    }
}

/// `MAXWAIT ms`: 0 to 10^6.
pub fn max_wait(bytes: &[u8]) -> Result<u64, ArgError> {
    int_in(bytes, "MAXWAIT", 0, MAX_BOOKING_MS)
}

/// The longest `MAXWAIT`: 10^6 ms (16 min 40 s).
pub const MAX_BOOKING_MS: u64 = 1_000_000;
const _: () = assert!(MAX_BOOKING_MS * NS_PER_MS == crate::core::schedule::MAX_BOOKING_NS);

/// The longest `WAIT timeout_ms`: ten minutes.
pub const MAX_WAIT_MS: u64 = 600_000;

/// The option name as the client sent it, if it is short printable ASCII.
pub fn printable(word: &[u8]) -> Option<String> {
    (!word.is_empty() && word.len() <= 32 && word.iter().all(|b| b.is_ascii_graphic()))
        .then(|| String::from_utf8_lossy(word).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass parse answers what the two-pass one it replaced did
    /// (every byte checked, then a checked fold saturating at u64::MAX).
    #[test]
    fn integers_parse_as_the_two_pass_reference_does() {
        fn reference(bytes: &[u8]) -> Result<Option<u64>, ()> {
            let (negative, digits) = match bytes.split_first() {
                Some((b'-', rest)) => (true, rest),
                _ => (false, bytes),
            };
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return Err(());
            }
            if digits[0] == b'0' && (digits.len() > 1 || negative) {
                return Err(());
            }
            let value = digits
                .iter()
                .try_fold(0u64, |acc, d| acc.checked_mul(10)?.checked_add(u64::from(d - b'0')))
                .unwrap_or(u64::MAX);
            Ok(if negative && value != 0 { None } else { Some(value) })
        }
        let mut cases: Vec<Vec<u8>> = [
            "",
            "-",
            "0",
            "-0",
            "00",
            "007",
            "1",
            "-1",
            "9",
            "10",
            "6000000",
            "9999999999999999999",
            "1000000000000000000",
            "10000000000000000000",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "184467440737095516150",
            "-18446744073709551616",
            "1a",
            "a1",
            "1 ",
            " 1",
            "+1",
            "1-",
            "--1",
            "12345678901234567890123",
            "0x10",
            "1.5",
            "/",
            ":",
        ]
        .iter()
        .map(|c| c.as_bytes().to_vec())
        .collect();
        // Every byte in the first, middle and last place of a number.
        for b in 0..=255u8 {
            cases.push(vec![b]);
            cases.push(vec![b'4', b, b'2']);
            cases.push(vec![b'9'; 25].into_iter().chain([b]).collect());
        }
        for c in &cases {
            assert_eq!(parse_integer(c), reference(c), "{:?}", String::from_utf8_lossy(c));
        }
    }

    fn opts(words: &[&str]) -> Result<Options, ArgError> {
        Cursor::command(words.len(), |i| words[i].as_bytes(), 0, 0, true)?.options(true)
    }

    #[test]
    fn a_duration_with_a_unit_says_durations_are_milliseconds() {
        let e = |w: &str| period(w.as_bytes(), "period_ms").unwrap_err().to_string();
        assert_eq!(e("1s"), "ERR period_ms is not an integer: durations are whole milliseconds (that is 1000)");
        assert_eq!(e("250ms"), "ERR period_ms is not an integer: durations are whole milliseconds (that is 250)");
        assert_eq!(e("10M"), "ERR period_ms is not an integer: durations are whole milliseconds (that is 600000)");
        assert_eq!(e("2h"), "ERR period_ms is not an integer: durations are whole milliseconds (that is 7200000)");
        assert_eq!(e("99999999999999999999d"), "ERR period_ms is not an integer: durations are whole milliseconds");
        for plain in ["1.5", "abc", "1x", "s", "-1s", ""] {
            assert_eq!(e(plain), "ERR period_ms is not an integer", "{plain}");
        }
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
    }

    #[test]
    fn options_are_case_insensitive_in_any_order() {
        assert_eq!(
            opts(&[]),
            Ok(Options { burst: None, cost: 1, refund: None, peek: false, wait_ms: None, max_wait_ms: None })
        );
        assert_eq!(
            opts(&["peek", "Cost", "0", "burst", "7"]),
            Ok(Options { burst: Some(7), cost: 0, refund: None, peek: true, wait_ms: None, max_wait_ms: None })
        );
        assert_eq!(
            opts(&["refund", "5"]),
            Ok(Options { burst: None, cost: 1, refund: Some(5), peek: false, wait_ms: None, max_wait_ms: None })
        );
    }

    #[test]
    fn refund_replaces_cost_and_excludes_peek() {
        let conflict = |with| Err(ArgError::Conflict("REFUND", with));
        assert_eq!(opts(&["REFUND", "1", "COST", "1"]), conflict("COST"));
        assert_eq!(opts(&["COST", "1", "REFUND", "1"]), conflict("COST"));
        assert_eq!(opts(&["REFUND", "1", "PEEK"]), conflict("PEEK"));
        assert_eq!(opts(&["PEEK", "REFUND", "1"]), conflict("PEEK"));
        assert_eq!(opts(&["REFUND", "1", "REFUND", "1"]), Err(ArgError::Repeated("REFUND")));
        assert_eq!(opts(&["REFUND", "0"]), Err(ArgError::OutOfRange { arg: "REFUND", min: 1, max: 4294967295 }));
        assert_eq!(
            opts(&["REFUND", "4294967296"]),
            Err(ArgError::OutOfRange { arg: "REFUND", min: 1, max: 4294967295 })
        );
        assert_eq!(opts(&["REFUND", "01"]), Err(ArgError::NotInteger("REFUND")));
        assert_eq!(opts(&["REFUND"]), Err(ArgError::MissingValue("REFUND")));
        assert_eq!(opts(&["REFUND", "4294967295"]).map(|o| o.refund), Ok(Some(4294967295)));
        assert_eq!(
            ArgError::Conflict("REFUND", "COST").to_string(),
            "ERR syntax error: REFUND cannot be combined with COST"
        );
        // RL.PEEK's cursor takes neither PEEK nor REFUND; a spec's takes REFUND.
        let words = ["REFUND", "3"];
        let r = Cursor::command(2, |i| words[i].as_bytes(), 0, 0, false).and_then(|mut c| c.options(false));
        assert_eq!(r, Err(ArgError::UnknownOption(Some("REFUND".into()))));
        let r = Cursor::spec(|i| words[i].as_bytes(), 0, 2, "GCRA").options(true);
        assert_eq!(r.map(|o| o.refund), Ok(Some(3)));
    }

    #[test]
    fn tz_is_an_option_only_where_asked_for_and_takes_the_next_word() {
        let words = ["tz", "PEEK", "COST", "2", "TZ"];
        let mut c = Cursor::command(4, |i| words[i].as_bytes(), 0, 0, true).unwrap();
        assert_eq!(
            c.options_with_tz(),
            Ok((
                Options { burst: None, cost: 2, refund: None, peek: false, wait_ms: None, max_wait_ms: None },
                Some(&b"PEEK"[..])
            ))
        );
        let mut c = Cursor::command(5, |i| words[i].as_bytes(), 2, 0, true).unwrap();
        assert_eq!(c.options_with_tz(), Err(ArgError::MissingValue("TZ")));
        assert_eq!(opts(&["TZ", "UTC"]), Err(ArgError::UnknownOption(Some("TZ".into()))));
        let twice = ["TZ", "UTC", "TZ", "UTC"];
        let mut c = Cursor::command(4, |i| twice[i].as_bytes(), 0, 0, true).unwrap();
        assert_eq!(c.options_with_tz(), Err(ArgError::Repeated("TZ")));
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
        let words = ["BURST", "3", "PEEK"];
        let r = Cursor::command(3, |i| words[i].as_bytes(), 0, 0, true).and_then(|mut c| c.options(false));
        assert_eq!(r, Err(ArgError::UnknownOption(Some("BURST".into()))));
        let r = Cursor::spec(|i| words[i].as_bytes(), 2, 3, "GCRA").options(true);
        assert_eq!(r, Err(ArgError::UnknownOption(Some("PEEK".into()))));
    }

    #[test]
    fn a_missing_positional_is_wrong_arity_for_a_command_and_named_in_a_spec() {
        let words = ["RL.X", "k", "abc"];
        // A command's arity is checked before any argument is parsed.
        assert!(matches!(Cursor::command(3, |i| words[i].as_bytes(), 2, 2, true), Err(ArgError::WrongArity)));
        let mut c = Cursor::spec(|i| words[i].as_bytes(), 2, 3, "GCRA");
        assert_eq!(c.next_arg("limit"), Ok(&b"abc"[..]));
        assert_eq!(c.next_arg("period_ms"), Err(ArgError::MissingArg { spec: "GCRA", arg: "period_ms" }));
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
