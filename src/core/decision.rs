//! What every limiter answers: the five fields of the reply (and `MAXWAIT`'s
//! sixth, `wait_ms`), as plain data.

use super::time::Millis;

/// The outcome of one limiter call, exactly the five reply fields of the
/// contract. Durations are whole milliseconds, rounded up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The request conforms (and, unless it was a PEEK or COST 0, was consumed).
    pub allowed: bool,
    /// The largest cost admitted at once from idle (burst / capacity / limit).
    pub limit: u64,
    /// The largest cost that could be admitted right now, after this call.
    pub remaining: u64,
    /// 0 if allowed; else the least whole ms until the same request would be
    /// allowed; -1 if it never can be (cost > limit).
    pub retry_after_ms: i64,
    /// Whole ms until the limiter is full again (remaining == limit); 0 if full.
    pub reset_after_ms: u64,
    /// `MAXWAIT` (a booking): the whole ms, rounded up, after which an
    /// allowed request starts; 0 when it starts now, and for every other call.
    /// Only a call with `MAXWAIT` replies with it.
    pub wait_ms: u64,
}

/// The retry of a call that several limits decide together (`RL.ALL`) and
/// that some of them deny: -1 if a denying limit can never allow (its cost
/// exceeds its limit), else the longest wait among the denying limits.
/// Limits only refill while nothing else happens, so after that wait every
/// one of them allows.
pub fn combined_retry<'a>(decisions: impl Iterator<Item = &'a Decision>) -> i64 {
    let mut longest = 0;
    for d in decisions.filter(|d| !d.allowed) {
        if d.retry_after_ms < 0 {
            return -1;
        }
        longest = longest.max(d.retry_after_ms);
    }
    longest
}

/// A decision plus the state to store, if the call consumed anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome<S> {
    pub decision: Decision,
    /// `Some` exactly when the request was allowed with a cost above zero: the
    /// new state, and the absolute time (ms since the epoch) at which the
    /// limiter is full again, which is when the key may expire. A PEEK call
    /// computes the same outcome and simply does not store it.
    pub write: Option<Write<S>>,
}

impl<S> Outcome<S> {
    /// The same outcome with its state in another form.
    #[inline]
    pub fn map_state<T: From<S>>(self) -> Outcome<T> {
        Outcome {
            decision: self.decision,
            write: self.write.map(|w| Write { state: w.state.into(), expire_at: w.expire_at }),
        }
    }
}

/// A state to store and the key's absolute expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Write<S> {
    pub state: S,
    pub expire_at: Millis,
}

/// An argument combination the core cannot represent. `arg` is the argument
/// to name in the error reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamError {
    pub arg: &'static str,
    pub reason: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(allowed: bool, retry_after_ms: i64) -> Decision {
        Decision { allowed, limit: 10, remaining: 0, retry_after_ms, reset_after_ms: 0, wait_ms: 0 }
    }

    #[test]
    fn retry_is_the_longest_wait_among_the_denying_limits() {
        let ds = [d(false, 100), d(true, 0), d(false, 250), d(false, 1)];
        assert_eq!(combined_retry(ds.iter()), 250);
    }

    #[test]
    fn retry_is_never_when_any_denying_limit_can_never_allow() {
        let ds = [d(false, 100), d(false, -1), d(false, 250)];
        assert_eq!(combined_retry(ds.iter()), -1);
    }

    #[test]
    fn allowed_limits_do_not_count_towards_the_retry() {
        assert_eq!(combined_retry([d(true, 0), d(false, 7)].iter()), 7);
    }
}
