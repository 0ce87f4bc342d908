//! `RL.TOKENBUCKET key capacity refill_tokens refill_period_ms [COST n] [PEEK]`

use crate::core::time::NS_PER_US;
use crate::core::{Outcome, TokenBucket, TokenBucketState};
use crate::module::args::{self, Accepts, ArgError, Options};
use crate::module::ffi::Argv;

use super::Limiter;
use crate::module::stats::{self, Counters};

impl Limiter for TokenBucket {
    type State = TokenBucketState;
    const STATS: &'static Counters = &stats::TOKENBUCKET;

    fn parse(a: &Argv<'_>) -> Result<(Self, Options), ArgError> {
        if a.len() < 5 {
            return Err(ArgError::WrongArity);
        }
        let capacity = args::count(a.bytes(2), "capacity")?;
        let refill_tokens = args::count(a.bytes(3), "refill_tokens")?;
        let refill_period = args::period(a.bytes(4), "refill_period_ms")?;
        let opts = args::options(a, 5, Accepts { burst: false, peek: true })?;
        Ok((TokenBucket::new(capacity, refill_tokens, refill_period)?, opts))
    }

    fn check(&self, state: Option<TokenBucketState>, now_us: u64, cost: u64) -> Outcome<TokenBucketState> {
        TokenBucket::check(self, state, now_us.saturating_mul(NS_PER_US), cost)
    }
}
