//! Out of memory: with `maxmemory` exceeded and `noeviction`, a call that
//! would create a limiter key is refused with Redis's OOM error and creates
//! nothing, for every command; once memory is freed, they work again.

mod common;

use common::limiter::{exists, try_rl};
use common::replication::info_u64;
use common::{Server, ServerOptions, T0_MS};

#[test]
fn a_new_limiter_key_is_refused_with_oom_and_nothing_is_created() {
    let s = Server::start_with(ServerOptions { fake_clock: true, ..Default::default() });
    s.clock.as_ref().unwrap().freeze_at_ms(T0_MS);
    let mut c = s.conn();
    // 16 MB of string, then a limit of 8 MB.
    let _: i64 = redis::cmd("SETRANGE").arg("ballast").arg(16 << 20).arg("x").query(&mut c).unwrap();
    for (name, value) in [("maxmemory-policy", "noeviction"), ("maxmemory", "8mb")] {
        let _: () = redis::cmd("CONFIG").arg("SET").arg(name).arg(value).query(&mut c).unwrap();
    }
    let used = info_u64(&mut c, "memory", "used_memory");
    let max = info_u64(&mut c, "memory", "maxmemory");
    assert!(used > max, "used_memory {used} is not above maxmemory {max}");

    let lines = ["RL.GCRA new:g 10 1000", "RL.TOKENBUCKET new:t 10 1 1000", "RL.SLIDE new:s 10 1000"];
    for line in lines {
        for opts in ["", " COST 3", " BURST 20"] {
            if opts == " BURST 20" && !line.starts_with("RL.GCRA") {
                continue;
            }
            let e = try_rl(&mut c, &format!("{line}{opts}")).expect_err(line);
            assert_eq!(e.code(), Some("OOM"), "{line}{opts}: {e}");
            let key = line.split_whitespace().nth(1).unwrap();
            assert!(!exists(&mut c, key), "{line}{opts} created {key} over maxmemory");
        }
    }
    let keys: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(keys, 1, "only the ballast");

    // With the memory back, the same calls create their keys.
    let _: i64 = redis::cmd("DEL").arg("ballast").query(&mut c).unwrap();
    for line in lines {
        assert!(try_rl(&mut c, line).unwrap_or_else(|e| panic!("{line}: {e}")).allowed, "{line}");
        assert!(exists(&mut c, line.split_whitespace().nth(1).unwrap()), "{line}");
    }
}
