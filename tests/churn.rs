//! A million calls leave nothing behind (issue 31): acquire/release and log
//! calls over 100,000 keys, then every key expires by itself (the clock moved
//! past the last lease and log entry), and `used_memory` comes back to where
//! it started: no lease, log entry, block or id outlives its key. Every wait
//! is bounded in real time.

mod common;

use std::time::{Duration, Instant};

use common::replication::info_u64;
use common::{Server, ServerOptions, T0_MS};

const KEYS: usize = 100_000;
const ROUNDS: usize = 3;

#[test]
fn a_million_calls_over_100000_keys_leave_used_memory_where_it_started() {
    let s = Server::start_with(ServerOptions { fake_clock: true, ..Default::default() });
    let clock = s.clock.as_ref().unwrap();
    clock.freeze_at_ms(T0_MS);
    let mut c = s.conn();
    let used = |c: &mut redis::Connection| info_u64(c, "memory", "used_memory");
    let start = used(&mut c);
    let mut calls = 0usize;
    let batch = |c: &mut redis::Connection, calls: &mut usize, f: &dyn Fn(&mut redis::Pipeline, usize)| {
        for chunk in (0..KEYS).collect::<Vec<_>>().chunks(2_000) {
            let mut p = redis::pipe();
            for &k in chunk {
                f(&mut p, k);
            }
            // An error reply fails the whole pipeline's query.
            let replies: Vec<redis::Value> = p.query(c).unwrap();
            *calls += replies.len();
        }
    };
    for round in 0..ROUNDS {
        clock.advance_ms(1);
        batch(&mut c, &mut calls, &|p, k| {
            let (lease, log) = (format!("l:{k}"), format!("g:{k}"));
            p.cmd("RL.ACQUIRE").arg(&lease).arg(10).arg(1000).arg("ID").arg(format!("r{round}"));
            p.cmd("RL.RELEASE").arg(&lease).arg(format!("r{round}"));
            p.cmd("RL.LOG").arg(&log).arg(100).arg(1000);
        });
    }
    // A lease left on every key (its holder "crashed"), with a generated id.
    batch(&mut c, &mut calls, &|p, k| {
        p.cmd("RL.ACQUIRE").arg(format!("l:{k}")).arg(10).arg(1000);
        p.cmd("RL.LOG").arg(format!("g:{k}")).arg(100).arg(1000);
    });
    assert!(calls >= 1_100_000, "{calls} calls");
    let dbsize: usize = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(dbsize, 2 * KEYS);
    assert!(used(&mut c) > start + 10_000_000, "the keys take memory");

    // Past every deadline: each key has expired. A full SCAN deletes them
    // (lazily, as a client touching them would).
    clock.advance_ms(2_000);
    let mut cursor = 0u64;
    loop {
        let (next, _): (u64, Vec<String>) =
            redis::cmd("SCAN").arg(cursor).arg("COUNT").arg(10_000).query(&mut c).unwrap();
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    let dbsize: usize = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(dbsize, 0, "keys outlived their limiters");
    // The server shrinks its tables on its own cron; wait for it (bounded).
    let deadline = Instant::now() + Duration::from_secs(20);
    // 1 MiB over 100,000 keys: 10 bytes a key, below any allocation a leaked
    // lease, log entry or block would hold.
    let slack = 1024 * 1024;
    loop {
        let now = used(&mut c);
        if now <= start + slack {
            eprintln!("used_memory: {start} at the start, {now} after {calls} calls and every key expired");
            break;
        }
        assert!(Instant::now() < deadline, "used_memory {now}, {start} at the start: {} bytes left", now - start);
        std::thread::sleep(Duration::from_millis(50));
    }
}
