//! Invariant 1: K concurrent clients on one fresh key with limit L and a long
//! period get exactly L allowed in total, every time.

mod common;

use std::sync::{Arc, Barrier};
use std::thread;

use common::limiter::try_rl;
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
    let url = Arc::new(s.url());
    for round in 0..ROUNDS {
        for (cmd, args) in [
            ("RL.GCRA", format!("{LIMIT} 3600000")),
            ("RL.TOKENBUCKET", format!("{LIMIT} 1 3600000")),
            ("RL.SLIDE", format!("{LIMIT} 3600000")),
        ] {
            let line = Arc::new(format!("{cmd} hot:{cmd}:{round} {args}"));
            let barrier = Arc::new(Barrier::new(CLIENTS));
            let workers: Vec<_> = (0..CLIENTS)
                .map(|_| {
                    let (url, line, barrier) = (url.clone(), line.clone(), barrier.clone());
                    thread::spawn(move || {
                        let mut c = redis::Client::open(url.as_str()).unwrap().get_connection().unwrap();
                        barrier.wait();
                        (0..CALLS).filter(|_| try_rl(&mut c, &line).unwrap().allowed).count()
                    })
                })
                .collect();
            let allowed: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
            assert_eq!(allowed, LIMIT, "{line}, round {round}");
        }
    }
}
