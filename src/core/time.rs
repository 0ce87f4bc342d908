//! Time as the core sees it: nanoseconds since the Unix epoch for GCRA,
//! the token bucket, the log and leases (microseconds for the sliding
//! window, whose state is whole milliseconds). Where a time crosses between
//! the Redis layer and an algorithm (the time a call runs at, a key's
//! expiry) its unit is in its type: [`Nanos`], [`Millis`]. Inside an
//! algorithm the arithmetic is on plain `u64`s named with their unit.
//!
//! The core never reads a clock; the caller passes `now`. These helpers hold
//! the two roundings the contract fixes: the time a decision takes is its
//! exact time rounded *up* to a whole nanosecond, once per decision (so a
//! limiter never admits faster than configured), and durations reported to
//! clients round *up* to whole milliseconds (so waiting the reported time is
//! always enough).

/// A time in whole nanoseconds: an instant (since the Unix epoch) or a
/// span. What crosses between the Redis layer and an algorithm (the time a
/// call runs at) carries its unit in its type; inside an algorithm the
/// arithmetic is on plain `u64`s named with their unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Nanos(pub u64);

/// A time in whole milliseconds: an instant (since the Unix epoch), such as
/// a key's expiry, or a span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Millis(pub u64);

impl Nanos {
    /// The millisecond this instant falls in (rounded down), as the
    /// server's millisecond clock reads it.
    #[inline]
    pub const fn floor_ms(self) -> Millis {
        Millis(self.0 / NS_PER_MS)
    }

    /// This instant in whole µs, rounded down (the sliding window's unit).
    #[inline]
    pub const fn floor_us(self) -> u64 {
        self.0 / NS_PER_US
    }
}

impl Millis {
    /// The same time in ns (saturating: no time in range comes near).
    #[inline]
    pub const fn ns(self) -> Nanos {
        Nanos(self.0.saturating_mul(NS_PER_MS))
    }
}

/// Microseconds per millisecond.
pub const US_PER_MS: u64 = 1_000;

/// Nanoseconds per microsecond.
pub const NS_PER_US: u64 = 1_000;

/// Nanoseconds per millisecond.
pub const NS_PER_MS: u64 = 1_000_000;

/// The longest `period_ms` / `refill_period_ms` / `window_ms` accepted (10^12 ms, ~31.7 years).
pub const MAX_PERIOD_MS: u64 = 1_000_000_000_000;

/// The largest count accepted for `limit`, `BURST`, `capacity`, `refill_tokens` and `COST`.
pub const MAX_COUNT: u64 = u32::MAX as u64;

/// The longest time a limiter may take to go from drained to full: 10^12 ms
/// (~31.7 years). In nanoseconds that is 10^18, so with a clock up to the
/// year 2200 (7.3 * 10^18 ns) every stored time stays below 2^63.
pub const MAX_SPAN_MS: u64 = 1_000_000_000_000;

/// `ceil(us / 1000)`: a duration in whole milliseconds, rounded up.
#[inline]
pub const fn ceil_ms(us: u64) -> u64 {
    us.div_ceil(US_PER_MS)
}

/// `ceil(ns / 10^6)`: a duration in nanoseconds as whole milliseconds, rounded up.
#[inline]
pub const fn ceil_ms_ns(ns: u64) -> u64 {
    ns.div_ceil(NS_PER_MS)
}

/// A key's expiry (ms since the epoch) when all the time charged to it has
/// passed at `full_at_ns`: that instant rounded up to a whole millisecond.
/// No server expires a key before it: Redis 8's active expiry deletes a key
/// within its expiry's millisecond (once now >= when), lazy expiry and the
/// others once now > when, and `now >= when` implies `now >= full_at_ns`.
/// So PTTL is the reply's `reset_after_ms` on a whole-ms clock (Redis 7.0)
/// and that or one more on a sub-ms one (Redis 7.2+, Valkey).
#[inline]
pub const fn expiry_ms(full_at_ns: u64) -> u64 {
    full_at_ns.div_ceil(NS_PER_MS)
}

/// `ceil(a * b / d)`, exact. `d` must be non-zero and the result must fit a
/// `u64` (the callers' ranges guarantee it). 64-bit arithmetic when the
/// product fits, 128-bit otherwise.
#[inline]
pub fn mul_div_ceil(a: u64, b: u64, d: u64) -> u64 {
    match a.checked_mul(b) {
        Some(p) => p.div_ceil(d),
        None => (u128::from(a) * u128::from(b)).div_ceil(u128::from(d)) as u64,
    }
}

/// `floor(a * b / d)`, exact; as [`mul_div_ceil`].
#[inline]
pub fn mul_div_floor(a: u64, b: u64, d: u64) -> u64 {
    match a.checked_mul(b) {
        Some(p) => p / d,
        None => (u128::from(a) * u128::from(b) / u128::from(d)) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceil_ms_rounds_up_partial_milliseconds() {
        assert_eq!(ceil_ms(0), 0);
        assert_eq!(ceil_ms(1), 1);
        assert_eq!(ceil_ms(999), 1);
        assert_eq!(ceil_ms(1000), 1);
        assert_eq!(ceil_ms(1001), 2);
        assert_eq!(ceil_ms_ns(0), 0);
        assert_eq!(ceil_ms_ns(1), 1);
        assert_eq!(ceil_ms_ns(1_000_000), 1);
        assert_eq!(ceil_ms_ns(1_000_001), 2);
    }

    #[test]
    fn mul_div_is_exact_on_both_paths() {
        assert_eq!(mul_div_ceil(1, 1_000_000_000, 3), 333_333_334);
        assert_eq!(mul_div_floor(1, 1_000_000_000, 3), 333_333_333);
        assert_eq!(mul_div_ceil(3, 1_000_000_000, 3), 1_000_000_000);
        // 2^32-1 units of 10^18 ns: the product needs 128 bits.
        let p = 1_000_000_000_000_000_000;
        assert_eq!(mul_div_ceil(MAX_COUNT, p, MAX_COUNT), p);
        assert_eq!(mul_div_floor(MAX_COUNT, p, MAX_COUNT), p);
        assert_eq!(
            mul_div_ceil(MAX_COUNT - 1, p, MAX_COUNT),
            (u128::from(MAX_COUNT - 1) * p as u128).div_ceil(MAX_COUNT as u128) as u64
        );
        assert_eq!(
            mul_div_floor(MAX_COUNT - 1, p, MAX_COUNT),
            (u128::from(MAX_COUNT - 1) * p as u128 / MAX_COUNT as u128) as u64
        );
    }
}
