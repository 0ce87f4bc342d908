//! Time as the core sees it: plain `u64` microseconds since the Unix epoch.
//!
//! The core never reads a clock; the caller passes `now`. These helpers hold
//! the two roundings the contract fixes: per-unit intervals round *up* to whole
//! microseconds (so a limiter never admits faster than configured), and
//! durations reported to clients round *up* to whole milliseconds (so waiting
//! the reported time is always enough).

/// Microseconds per millisecond.
pub const US_PER_MS: u64 = 1_000;

/// The longest `period_ms` / `refill_period_ms` / `window_ms` accepted (10^12 ms, ~31.7 years).
pub const MAX_PERIOD_MS: u64 = 1_000_000_000_000;

/// The largest count accepted for `limit`, `BURST`, `capacity`, `refill_tokens` and `COST`.
pub const MAX_COUNT: u64 = u32::MAX as u64;

/// The longest time a limiter may take to go from drained to full: 10^15 ms
/// (~31,700 years) in microseconds. It keeps every stored time and every reply
/// well inside `u64` / `i64`, whatever the clock says.
pub const MAX_SPAN_US: u64 = 1_000_000_000_000_000_000;

/// `ceil(us / 1000)`: a duration in whole milliseconds, rounded up.
#[inline]
pub const fn ceil_ms(us: u64) -> u64 {
    us.div_ceil(US_PER_MS)
}

/// The time per unit for `count` units per `period_ms`, rounded up to whole
/// microseconds and never below 1 µs (the fastest rate a key can express).
/// `count` must be non-zero.
#[inline]
pub const fn unit_interval_us(period_ms: u64, count: u64) -> u64 {
    // period_ms <= 10^12, so period_ms * 1000 <= 10^15: no overflow.
    let us = (period_ms * US_PER_MS).div_ceil(count);
    if us == 0 {
        1
    } else {
        us
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
    }

    #[test]
    fn unit_interval_rounds_up_and_never_reaches_zero() {
        assert_eq!(unit_interval_us(1000, 10), 100_000);
        assert_eq!(unit_interval_us(1000, 3), 333_334);
        assert_eq!(unit_interval_us(1, 1000), 1);
        assert_eq!(unit_interval_us(1, MAX_COUNT), 1);
        assert_eq!(unit_interval_us(MAX_PERIOD_MS, 1), MAX_PERIOD_MS * 1000);
    }
}
