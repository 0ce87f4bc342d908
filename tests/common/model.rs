//! Helpers of the model-based tests of the pure core (`tests/core_*.rs`):
//! no server, so the unit half includes this file alone, by path:
//!
//! ```ignore
//! #[path = "common/model.rs"]
//! mod model;
//! ```
//!
//! (`mod common;` is the server harness: only the integration suite may
//! include it; see `tests/common/mod.rs`.) Every test binary uses a
//! different subset, hence the `dead_code` allowance.
#![allow(dead_code)]

use proptest::test_runner::Config as ProptestConfig;

/// A proptest configuration of `cases` cases that writes no regression
/// files (the minimal failing case is printed on failure).
pub fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// The least `x` in `0..=hi` with `pred(x)`, for a predicate monotone in `x`
/// (false ... false true ... true) that holds at `hi`.
pub fn least(hi: u64, pred: impl Fn(u64) -> bool) -> u64 {
    assert!(pred(hi), "search bound {hi} is too low");
    let (mut lo, mut hi) = (0, hi);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}
