//! Invariant 1: K concurrent clients on one fresh key with limit L and a long
//! period get exactly L allowed in total, every time.

mod common;

use common::limiter::{allowed_by_concurrent_clients, try_rl};
use common::{Server, ServerOptions};

const CLIENTS: usize = 16;
const LIMIT: usize = 100;
const ROUNDS: usize = 20;
/// Calls per client per round: together well over the limit.
const CALLS: usize = 2 * LIMIT / CLIENTS + 5;

#[test]
fn sixteen_clients_get_exactly_the_limit_every_time() {
    let s = Server::start_with(ServerOptions { fake_clock: true, ..Default::default() });
    // Frozen, so no refill and no window boundary can creep in.
    s.clock.as_ref().unwrap().freeze_at_ms(1_800_000_000_000);
    let url = s.url();
    for round in 0..ROUNDS {
        for (cmd, args) in [
            ("RL.GCRA", format!("{LIMIT} 3600000")),
            ("RL.TOKENBUCKET", format!("{LIMIT} 1 3600000")),
            ("RL.SLIDE", format!("{LIMIT} 3600000")),
        ] {
            let line = format!("{cmd} hot:{cmd}:{round} {args}");
            let call = {
                let line = line.clone();
                move |c: &mut redis::Connection| try_rl(c, &line).unwrap().allowed
            };
            let allowed = allowed_by_concurrent_clients(&url, CLIENTS, CALLS, call);
            assert_eq!(allowed, LIMIT, "{line}, round {round}");
        }
    }
}
