//! `RL.GCRA key limit period_ms [BURST n] [COST n] [PEEK]`

use crate::core::time::NS_PER_US;
use crate::core::{Gcra, GcraState, Outcome};
use crate::module::args::{self, Accepts, ArgError, Options};
use crate::module::ffi::Argv;

use super::Limiter;
use crate::module::stats::{self, Counters};

impl Limiter for Gcra {
    type State = GcraState;
    const STATS: &'static Counters = &stats::GCRA;

    fn parse(a: &Argv<'_>) -> Result<(Self, Options), ArgError> {
        if a.len() < 4 {
            return Err(ArgError::WrongArity);
        }
        let limit = args::count(a.bytes(2), "limit")?;
        let period = args::period(a.bytes(3), "period_ms")?;
        let opts = args::options(a, 4, Accepts { burst: true, peek: true })?;
        Ok((Gcra::new(limit, period, opts.burst.unwrap_or(limit))?, opts))
    }

    fn check(&self, state: Option<GcraState>, now_us: u64, cost: u64) -> Outcome<GcraState> {
        Gcra::check(self, state, now_us.saturating_mul(NS_PER_US), cost)
    }
}
