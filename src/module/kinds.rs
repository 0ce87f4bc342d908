//! THE registry of limiter kinds: one declaration per kind, and one list of
//! them, [`with_kinds!`]. Everything that names a kind follows from these:
//! the command table and handlers, the data types, `RL.ALL`'s specs,
//! `RL.PEEK`, `RL.APPLY`'s payload dispatch, `INFO rl` and the "expected
//! GCRA, TOKENBUCKET, SLIDE, LOG, QUOTA or CONCURRENCY" error texts.
//!
//! Adding a kind: its algorithm in `core/` (implementing
//! [`Algorithm`](crate::core::Algorithm)), its state's encoding in
//! `stored.rs`, an `impl Kind` below (its command's docs included: its
//! `Declaration` is made from it, `commands::of_kind`), and one entry in
//! [`with_kinds!`]. A test walks each kind's documented arguments against
//! its grammar.

use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicPtr, Ordering};

use redis_module::raw::RedisModuleType;

use crate::core::lease::{LeaseId, MAX_LEASE_LIMIT};
use crate::core::log::MAX_LOG_LIMIT;
use crate::core::time::Nanos;
use crate::core::{Algorithm, Change, Gcra, LeaseChange, LogChange, SlidingLog, SlidingWindow, TokenBucket, Verdict};

use super::acquire::{self, Acquire};
use super::args::id;
use super::args::{ArgError, Cursor, Options};
use super::command_info::{Arg, Info, Keys, BURST, COST, LEASE_COMPLEXITY, LIMITER_KEY, MAXWAIT, PEEK, V0_1_0, V0_2_0};
use super::ffi::{Argv, Ctx};
use super::fixed;
use super::quota_calendar::QuotaLimit;
use super::stats::Counters;
use super::stored::Stored;
use super::var_value;

/// Calls the macro `$m` with every kind, as `Variant: path::Type`, in the
/// order INFO, docs and error texts list them. The one list of kinds.
macro_rules! with_kinds {
    ($m:ident) => {
        $m! {
            Gcra: $crate::core::Gcra,
            TokenBucket: $crate::core::TokenBucket,
            SlidingWindow: $crate::core::SlidingWindow,
            SlidingLog: $crate::core::SlidingLog,
            Quota: $crate::module::quota_calendar::QuotaLimit,
            Concurrency: $crate::module::acquire::Acquire,
        }
    };
}
pub(crate) use with_kinds;

/// One limiter kind, as the module offers it: an algorithm, its command,
/// its `RL.ALL` / `RL.PEEK` keyword, its data type, its keyspace event, its
/// `INFO rl` counters, its docs and its argument grammar.
pub trait Kind: Algorithm<Write: Stored> + 'static {
    /// Its command, `RL.<KEYWORD>`: `COMMAND key <grammar> [PEEK]`.
    const COMMAND: &'static CStr;
    /// The word that starts its spec in `RL.ALL` and names it in `RL.PEEK`.
    const KEYWORD: &'static str;
    /// The 9-character data type name (`TYPE key` shows it).
    const TYPE_NAME: &'static CStr;
    /// The keyspace event a write fires (class `d`).
    const EVENT: &'static CStr;
    /// Its lower-case name: its line in `INFO rl` (`rl_<name>:calls=..`)
    /// and its spec form in RL.ALL's `COMMAND DOCS`.
    const INFO_NAME: &'static CStr;
    /// Its command's docs (`COMMAND DOCS`, `COMMAND INFO`).
    const DOCS: &'static Info;
    /// How many positional arguments its grammar takes: a command with
    /// fewer is refused for its arity before anything is parsed.
    const POSITIONALS: usize;
    /// Its `INFO rl` counters.
    fn stats() -> &'static Counters;
    /// Where its registered data type is kept (set once, at load).
    fn registered() -> &'static AtomicPtr<RedisModuleType>;
    /// The state a value of its data type holds, as its algorithm reads it.
    ///
    /// # Safety
    /// `value` is a live value of its data type; the state read borrows it
    /// for `'v`, during which nothing writes to it.
    unsafe fn read<'v>(value: *mut c_void) -> Self::State<'v>;
    /// Whether its reply has a sixth field, `lease` (`RL.ACQUIRE`).
    const LEASE_REPLY: bool = false;
    /// The lease a written change answers (only with [`LEASE_REPLY`](Self::LEASE_REPLY)).
    #[inline]
    fn lease(_change: Option<&Change<Self::Write>>) -> Option<&LeaseId> {
        None
    }
    /// No barging past clients waiting on the key (`RL.ACQUIRE ... WAIT`,
    /// see `commands::wait`): only a lease set has waiters, so only its
    /// kind looks. `key` is the key's name, `verdict` what `limiter` decided;
    /// `peek`: the call changes nothing.
    #[inline]
    fn behind_waiters<A: for<'s> Algorithm<State<'s> = Self::State<'s>, Write = Self::Write>>(
        _ctx: Ctx<'_>,
        _limiter: &A,
        _state: Option<Self::State<'_>>,
        _now: Nanos,
        _key: &[u8],
        _peek: bool,
        _verdict: &mut Verdict<Self::Write>,
    ) {
    }
    /// Its arguments after the key: the positionals, then the options.
    fn grammar<'a, F: Fn(usize) -> &'a [u8]>(c: &mut Cursor<'a, F>) -> Result<(Self, Options), ArgError>;

    /// Its registered data type.
    #[inline]
    fn redis_type() -> *mut RedisModuleType {
        Self::registered().load(Ordering::Relaxed)
    }

    /// Its command's arguments (`args[0]` the command, `args[1]` the key).
    #[inline]
    fn parse_command(args: &Argv<'_>) -> Result<(Self, Options), ArgError> {
        Self::parse_command_from(args.len(), |i| args.bytes(i))
    }

    /// [`parse_command`](Self::parse_command) over any byte source.
    #[inline]
    fn parse_command_from<'a>(len: usize, arg: impl Fn(usize) -> &'a [u8]) -> Result<(Self, Options), ArgError> {
        Self::grammar(&mut Cursor::command(len, arg, 2, Self::POSITIONALS, true)?)
    }
}

/// A kind's own statics: its `INFO rl` counters and the slot of its data
/// type (set once, at load).
macro_rules! statics {
    () => {
        fn stats() -> &'static Counters {
            static COUNTERS: Counters = Counters::new();
            &COUNTERS
        }
        fn registered() -> &'static AtomicPtr<RedisModuleType> {
            static SLOT: AtomicPtr<RedisModuleType> = AtomicPtr::new(std::ptr::null_mut());
            &SLOT
        }
    };
}

/// `RL.GCRA key limit period_ms [BURST n] [COST n | REFUND n] [MAXWAIT ms] [PEEK]`
impl Kind for Gcra {
    const COMMAND: &'static CStr = c"RL.GCRA";
    const KEYWORD: &'static str = "GCRA";
    const TYPE_NAME: &'static CStr = c"rl-gcra--";
    const EVENT: &'static CStr = c"rl.gcra";
    const INFO_NAME: &'static CStr = c"gcra";
    const DOCS: &'static Info = &Info {
        since: V0_1_0,
        summary: c"Checks and consumes a GCRA rate limit: limit per period_ms, with bursts",
        complexity: c"O(1)",
        arity: -4,
        keys: Keys::One { flags: LIMITER_KEY },
        args: &[Arg::key(c"key"), Arg::int(c"limit"), Arg::int(c"period_ms"), BURST, COST, MAXWAIT, PEEK],
        acl_categories: c"write fast",
        tips: None,
    };
    const POSITIONALS: usize = 2;
    statics!();
    unsafe fn read<'v>(value: *mut c_void) -> Self::State<'v> {
        // SAFETY: per the contract; its values are made by `fixed`.
        unsafe { fixed::read(value) }
    }
    fn grammar<'a, F: Fn(usize) -> &'a [u8]>(c: &mut Cursor<'a, F>) -> Result<(Self, Options), ArgError> {
        let limit = c.next_count("limit")?;
        let period = c.next_period("period_ms")?;
        let opts = c.options_with_booking(true)?;
        Ok((Gcra::new(limit, period, opts.burst.unwrap_or(limit))?, opts))
    }
}

/// `RL.TOKENBUCKET key capacity refill_tokens refill_period_ms [COST n | REFUND n] [MAXWAIT ms] [PEEK]`
impl Kind for TokenBucket {
    const COMMAND: &'static CStr = c"RL.TOKENBUCKET";
    const KEYWORD: &'static str = "TOKENBUCKET";
    const TYPE_NAME: &'static CStr = c"rl-tbkt--";
    const EVENT: &'static CStr = c"rl.tokenbucket";
    const INFO_NAME: &'static CStr = c"tokenbucket";
    const DOCS: &'static Info = &Info {
        since: V0_1_0,
        summary: c"Takes tokens from a bucket of capacity tokens refilled at refill_tokens per refill_period_ms",
        complexity: c"O(1)",
        arity: -5,
        keys: Keys::One { flags: LIMITER_KEY },
        args: &[
            Arg::key(c"key"),
            Arg::int(c"capacity"),
            Arg::int(c"refill_tokens"),
            Arg::int(c"refill_period_ms"),
            COST,
            MAXWAIT,
            PEEK,
        ],
        acl_categories: c"write fast",
        tips: None,
    };
    const POSITIONALS: usize = 3;
    statics!();
    unsafe fn read<'v>(value: *mut c_void) -> Self::State<'v> {
        // SAFETY: per the contract; its values are made by `fixed`.
        unsafe { fixed::read(value) }
    }
    fn grammar<'a, F: Fn(usize) -> &'a [u8]>(c: &mut Cursor<'a, F>) -> Result<(Self, Options), ArgError> {
        let capacity = c.next_count("capacity")?;
        let refill_tokens = c.next_count("refill_tokens")?;
        let refill_period = c.next_period("refill_period_ms")?;
        let opts = c.options_with_booking(false)?;
        Ok((TokenBucket::new(capacity, refill_tokens, refill_period)?, opts))
    }
}

/// `RL.SLIDE key limit window_ms [COST n | REFUND n] [PEEK]`
impl Kind for SlidingWindow {
    const COMMAND: &'static CStr = c"RL.SLIDE";
    const KEYWORD: &'static str = "SLIDE";
    const TYPE_NAME: &'static CStr = c"rl-slide-";
    const EVENT: &'static CStr = c"rl.slide";
    const INFO_NAME: &'static CStr = c"slide";
    const DOCS: &'static Info = &Info {
        since: V0_1_0,
        summary: c"Checks and counts a request against a sliding window of limit per window_ms",
        complexity: c"O(1)",
        arity: -4,
        keys: Keys::One { flags: LIMITER_KEY },
        args: &[Arg::key(c"key"), Arg::int(c"limit"), Arg::int(c"window_ms"), COST, PEEK],
        acl_categories: c"write fast",
        tips: None,
    };
    const POSITIONALS: usize = 2;
    statics!();
    unsafe fn read<'v>(value: *mut c_void) -> Self::State<'v> {
        // SAFETY: per the contract; its values are made by `fixed`.
        unsafe { fixed::read(value) }
    }
    fn grammar<'a, F: Fn(usize) -> &'a [u8]>(c: &mut Cursor<'a, F>) -> Result<(Self, Options), ArgError> {
        let limit = c.next_count("limit")?;
        let window = c.next_period("window_ms")?;
        let opts = c.options(false)?;
        Ok((SlidingWindow::new(limit, window), opts))
    }
}

/// `RL.LOG key limit window_ms [COST n | REFUND n] [PEEK]`
impl Kind for SlidingLog {
    const COMMAND: &'static CStr = c"RL.LOG";
    const KEYWORD: &'static str = "LOG";
    const TYPE_NAME: &'static CStr = c"rl-log---";
    const EVENT: &'static CStr = c"rl.log";
    const INFO_NAME: &'static CStr = c"log";
    const DOCS: &'static Info = &Info {
        since: V0_2_0,
        summary: c"Checks and logs a request against an exact sliding log of limit per window_ms",
        complexity: c"O(log N) where N is the number of entries in the log, plus the entries that age out",
        arity: -4,
        keys: Keys::One { flags: LIMITER_KEY },
        args: &[Arg::key(c"key"), Arg::int(c"limit"), Arg::int(c"window_ms"), COST, PEEK],
        acl_categories: c"write fast",
        tips: None,
    };
    const POSITIONALS: usize = 2;
    statics!();
    unsafe fn read<'v>(value: *mut c_void) -> Self::State<'v> {
        // SAFETY: per the contract; its values are made by `var_value`.
        unsafe { var_value::read::<LogChange>(value) }
    }
    fn grammar<'a, F: Fn(usize) -> &'a [u8]>(c: &mut Cursor<'a, F>) -> Result<(Self, Options), ArgError> {
        // At most 10,000: memory grows with it.
        let limit = c.next_int_in("limit", 1, MAX_LOG_LIMIT)?;
        let window = c.next_period("window_ms")?;
        let opts = c.options(false)?;
        Ok((SlidingLog::new(limit, window)?, opts))
    }
}

/// `RL.QUOTA key limit period [TZ zone] [COST n] [PEEK]`
impl Kind for QuotaLimit {
    const COMMAND: &'static CStr = c"RL.QUOTA";
    const KEYWORD: &'static str = "QUOTA";
    const TYPE_NAME: &'static CStr = c"rl-quota-";
    const EVENT: &'static CStr = c"rl.quota";
    const INFO_NAME: &'static CStr = c"quota";
    const DOCS: &'static Info = &Info {
        since: V0_2_0,
        summary: c"Counts requests against a quota of limit per calendar window (in a time zone) or per fixed window",
        complexity: c"O(1)",
        arity: -4,
        keys: Keys::One { flags: LIMITER_KEY },
        args: &[
            Arg::key(c"key"),
            Arg::int(c"limit"),
            Arg::string(c"period").summary(c"HOUR, DAY, WEEK, MONTH or YEAR, or a number of ms for fixed windows"),
            Arg::string(c"zone")
                .token(c"TZ")
                .optional()
                .summary(c"an IANA time zone for calendar windows (default UTC)"),
            COST,
            PEEK,
        ],
        acl_categories: c"write fast",
        tips: None,
    };
    const POSITIONALS: usize = 2;
    statics!();
    unsafe fn read<'v>(value: *mut c_void) -> Self::State<'v> {
        // SAFETY: per the contract; its values are made by `fixed`.
        unsafe { fixed::read(value) }
    }
    fn grammar<'a, F: Fn(usize) -> &'a [u8]>(c: &mut Cursor<'a, F>) -> Result<(Self, Options), ArgError> {
        let limit = c.next_count("limit")?;
        let period = c.next_arg("period")?;
        let (opts, tz) = c.options_with_tz()?;
        Ok((QuotaLimit::new(limit, period, tz)?, opts))
    }
}

/// `RL.ACQUIRE key limit lease_ms [COST n] [ID id] [PEEK]`: the concurrency
/// limit, `CONCURRENCY` in `RL.ALL` and `RL.PEEK`. (`RL.RELEASE` and
/// `RL.RENEW` act on its keys: `commands::release_renew`.)
impl Kind for Acquire {
    const COMMAND: &'static CStr = c"RL.ACQUIRE";
    const KEYWORD: &'static str = "CONCURRENCY";
    const TYPE_NAME: &'static CStr = c"rl-lease-";
    const EVENT: &'static CStr = c"rl.acquire";
    const INFO_NAME: &'static CStr = c"concurrency";
    const DOCS: &'static Info = &Info {
        since: V0_2_0,
        summary: c"Acquires a lease of cost units on a concurrency limit of limit units held at once, for lease_ms",
        complexity: LEASE_COMPLEXITY,
        arity: -4,
        keys: Keys::One { flags: LIMITER_KEY },
        args: &[
            Arg::key(c"key"),
            Arg::int(c"limit"),
            Arg::int(c"lease_ms"),
            Arg::int(c"cost").token(c"COST").optional().summary(c"the units this lease holds (default 1)"),
            Arg::string(c"id")
                .token(c"ID")
                .optional()
                .summary(c"names the lease (1 to 128 bytes): a retried acquire renews it, never takes a second slot"),
            Arg::int(c"timeout_ms")
                .token(c"WAIT")
                .optional()
                .summary(c"wait up to timeout_ms for the lease, first in, first out (1 to 600000)"),
            PEEK,
        ],
        acl_categories: c"write fast",
        tips: None,
    };
    const POSITIONALS: usize = 2;
    const LEASE_REPLY: bool = true;
    statics!();
    unsafe fn read<'v>(value: *mut c_void) -> Self::State<'v> {
        // SAFETY: per the contract; its values are made by `var_value`.
        unsafe { var_value::read::<LeaseChange>(value) }
    }
    #[inline]
    fn lease(change: Option<&Change<Self::Write>>) -> Option<&LeaseId> {
        acquire::lease_of(change)
    }
    #[inline(always)]
    fn behind_waiters<A: for<'s> Algorithm<State<'s> = Self::State<'s>, Write = Self::Write>>(
        ctx: Ctx<'_>,
        limiter: &A,
        state: Option<Self::State<'_>>,
        now: Nanos,
        key: &[u8],
        peek: bool,
        verdict: &mut Verdict<Self::Write>,
    ) {
        super::waiters::behind_waiters(ctx, limiter, state, now, key, peek, verdict)
    }
    fn grammar<'a, F: Fn(usize) -> &'a [u8]>(c: &mut Cursor<'a, F>) -> Result<(Self, Options), ArgError> {
        // At most 100,000: memory grows with it.
        let limit = c.next_int_in("limit", 1, MAX_LEASE_LIMIT)?;
        let lease_ms = c.next_period("lease_ms")?;
        let (opts, name) = c.options_with_id()?;
        let name = name.map(|bytes| id(bytes, "ID")).transpose()?;
        Ok((Acquire::new(limit, lease_ms, name)?, opts))
    }
}

/// Something to do with every kind in turn ([`each`]).
pub trait EachKind {
    fn kind<K: Kind>(&mut self);
}

/// Something to do with one kind, chosen at run time ([`by_keyword`], [`by_tag`]).
pub trait WithKind {
    type Out;
    fn run<K: Kind>(self) -> Self::Out;
}

macro_rules! dispatch {
    ($($variant:ident: $kind:ty,)*) => {
        /// Every kind's keyword, in order.
        pub const KEYWORDS: &[&str] = &[$(<$kind as Kind>::KEYWORD),*];

        /// Runs `v` for every kind, in order.
        pub fn each(v: &mut impl EachKind) {
            $(v.kind::<$kind>();)*
        }

        /// The command of the kind whose data type is `ty`, if one is.
        pub fn command_of_type(ty: *mut RedisModuleType) -> Option<&'static CStr> {
            $(if !ty.is_null() && ty == <$kind as Kind>::redis_type() {
                return Some(<$kind as Kind>::COMMAND);
            })*
            None
        }

        /// Runs `w` for the kind whose keyword is `word` (any case); gives
        /// `w` back if none is.
        pub fn by_keyword<W: WithKind>(word: &[u8], w: W) -> Result<W::Out, W> {
            $(if word.eq_ignore_ascii_case(<$kind as Kind>::KEYWORD.as_bytes()) {
                return Ok(w.run::<$kind>());
            })*
            Err(w)
        }

        /// Runs `w` for the kind whose effect payloads start with `tag`.
        pub fn by_tag<W: WithKind>(tag: u8, w: W) -> Result<W::Out, W> {
            $(if <<$kind as Algorithm>::Write as Stored>::owns_tag(tag) {
                return Ok(w.run::<$kind>());
            })*
            Err(w)
        }
    };
}
with_kinds!(dispatch);

/// Whether `word` names a kind (any case).
pub fn is_keyword(word: &[u8]) -> bool {
    KEYWORDS.iter().any(|k| word.eq_ignore_ascii_case(k.as_bytes()))
}

/// "GCRA, TOKENBUCKET, SLIDE, LOG, QUOTA or CONCURRENCY": the kinds, for error texts.
pub fn expected() -> String {
    match KEYWORDS.split_last() {
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Names(Vec<String>);
    impl EachKind for Names {
        fn kind<K: Kind>(&mut self) {
            self.0.push(K::COMMAND.to_str().unwrap().to_string());
        }
    }

    #[test]
    fn every_kind_is_listed_once_with_its_own_names() {
        let mut names = Names(Vec::new());
        each(&mut names);
        assert_eq!(names.0, ["RL.GCRA", "RL.TOKENBUCKET", "RL.SLIDE", "RL.LOG", "RL.QUOTA", "RL.ACQUIRE"]);
        assert_eq!(expected(), "GCRA, TOKENBUCKET, SLIDE, LOG, QUOTA or CONCURRENCY");
        // Each command is RL.<keyword> (but the concurrency limit's, which
        // acquires), and data type names are 9 characters.
        struct Check;
        impl EachKind for Check {
            fn kind<K: Kind>(&mut self) {
                if K::KEYWORD != "CONCURRENCY" {
                    assert_eq!(K::COMMAND.to_str().unwrap(), format!("RL.{}", K::KEYWORD));
                }
                assert_eq!(K::TYPE_NAME.to_bytes().len(), 9, "{:?}", K::TYPE_NAME);
                assert_eq!(K::DOCS.arity, -(2 + K::POSITIONALS as i32), "{:?}", K::COMMAND);
                assert!(std::ptr::eq(K::stats(), K::stats()));
            }
        }
        each(&mut Check);
    }

    struct Tag;
    impl WithKind for Tag {
        type Out = &'static str;
        fn run<K: Kind>(self) -> &'static str {
            K::KEYWORD
        }
    }

    #[test]
    fn keywords_and_tags_find_their_kind() {
        assert_eq!(by_keyword(b"slide", Tag).ok(), Some("SLIDE"));
        assert_eq!(by_keyword(b"TokenBucket", Tag).ok(), Some("TOKENBUCKET"));
        assert!(by_keyword(b"LEAKY", Tag).is_err());
        assert_eq!(by_tag(b'G', Tag).ok(), Some("GCRA"));
        assert_eq!(by_keyword(b"quota", Tag).ok(), Some("QUOTA"));
        assert_eq!(by_tag(b'Q', Tag).ok(), Some("QUOTA"));
        assert!(by_tag(b'X', Tag).is_err());
        assert!(is_keyword(b"gcra") && !is_keyword(b"PEEK"));
    }
}
