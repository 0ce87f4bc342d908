//! `RL.SLIDE key limit window_ms [COST n] [PEEK]`

use crate::core::{Outcome, SlidingWindow, SlidingWindowState};
use crate::module::args::{self, Accepts, ArgError, Options};
use crate::module::ffi::Argv;

use super::Limiter;
use crate::module::stats::{self, Counters};

impl Limiter for SlidingWindow {
    type State = SlidingWindowState;
    const STATS: &'static Counters = &stats::SLIDE;

    fn parse(a: &Argv<'_>) -> Result<(Self, Options), ArgError> {
        if a.len() < 4 {
            return Err(ArgError::WrongArity);
        }
        let limit = args::count(a.bytes(2), "limit")?;
        let window = args::period(a.bytes(3), "window_ms")?;
        let opts = args::options(a, 4, Accepts { burst: false, peek: true })?;
        Ok((SlidingWindow::new(limit, window), opts))
    }

    fn check(&self, state: Option<SlidingWindowState>, now_us: u64, cost: u64) -> Outcome<SlidingWindowState> {
        SlidingWindow::check(self, state, now_us, cost)
    }

    fn forgets(&self, state: &SlidingWindowState, now_us: u64) -> bool {
        SlidingWindow::forgets(self, state, now_us)
    }
}
