//! Table-driven tests of the core: one row per request, in order, each
//! with the reply it must get. Shared by the algorithms' unit tests.

use super::decision::Outcome;

pub const MS: u64 = 1_000;
/// An arbitrary, realistic epoch time (2027-01-15), on a boundary of every
/// window the tables use (epoch-aligned).
pub const T0: u64 = 1_800_000_000_000 * MS;

/// One request: (at ms after T0, cost, allowed, remaining, retry_after_ms, reset_after_ms).
pub type Row = (u64, u64, bool, u64, i64, u64);

/// Runs the rows in order against one key, starting missing, storing each
/// write; checks every reply field, the limit, and that a request writes
/// exactly when it consumed (the tables hold no repairs).
pub fn run<S: Copy>(check: impl Fn(Option<S>, u64, u64) -> Outcome<S>, limit: u64, rows: &[Row]) {
    let mut state = None;
    for (i, &(at, cost, allowed, remaining, retry, reset)) in rows.iter().enumerate() {
        let o = check(state, T0 + at * MS, cost);
        let d = o.decision;
        assert_eq!(
            (d.allowed, d.remaining, d.retry_after_ms, d.reset_after_ms),
            (allowed, remaining, retry, reset),
            "row {i}: {:?}",
            rows[i]
        );
        assert_eq!(d.limit, limit, "row {i}: limit");
        assert_eq!(o.write.is_some(), allowed && cost > 0, "row {i}: write");
        if let Some(w) = o.write {
            state = Some(w.state);
        }
    }
}
