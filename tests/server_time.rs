//! Which time the limiters see inside one MULTI/EXEC and inside one script.
//!
//! The module reads `RedisModule_CachedMicroseconds` where the server has it
//! (Redis 7.2+, every Valkey): the time the server cached when the outermost
//! command (EXEC, EVAL) started, so every call inside sees one time, as key
//! expiry does. Redis 7.0 has only `RedisModule_Milliseconds`, read at each
//! call. These tests run on the REAL clock (no fake clock): real time must
//! pass between the calls for the difference to show. They spend it inside
//! the transaction (DEBUG SLEEP) and inside the script (a bounded Lua busy
//! loop of ~25 ms): the one deliberate wait in the suite, as the point is
//! what the server does while time passes under a running command.
//!
//! The probe: `RL.GCRA k 1 100000 BURST 10` (one unit per 100 s, burst 10).
//! From idle, call i (1-based) at time t_i leaves the theoretical arrival
//! time at t_1 + i * 100 s, so its `reset_after_ms` is
//! i * 100000 - (t_i - t_1): the drift `i * 100000 - reset_after_ms` is
//! exactly how much later than the first call call i read the clock, in
//! whole milliseconds.
//!
//! On Redis 7.0 the tests assert the per-call clock instead, honestly: the
//! drift grows with the time spent between the calls (bounded below by what
//! the server's own TIME shows there; TIME reads gettimeofday() per call on
//! 7.0, while on Valkey it too returns the cached time).

mod common;

use std::time::{Duration, Instant};

use common::limiter::Reply;
use common::{Server, ServerOptions, ServerVersion};
use redis::{Connection, Value};

const INTERVAL_MS: i64 = 100_000;
const PROBE_ARGS: [&str; 4] = ["1", "100000", "BURST", "10"];
const CALLS: usize = 4;
/// Real time spent between two consecutive calls.
const GAP: Duration = Duration::from_millis(25);

/// Whether the server gives modules `RedisModule_CachedMicroseconds`.
fn has_cached_time(v: &ServerVersion) -> bool {
    v.is_valkey() || v.at_least(7, 2, 0)
}

fn server() -> Server {
    // Real clock: time has to pass inside the command.
    Server::start_with(ServerOptions { fake_clock: false, ..Default::default() })
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::BulkString(b) => std::str::from_utf8(b).unwrap().parse().unwrap(),
        other => panic!("expected an integer, got {other:?}"),
    }
}

fn reply(v: &Value) -> Reply {
    let Value::Array(f) = v else { panic!("expected a limiter reply, got {v:?}") };
    assert_eq!(f.len(), 5, "{v:?}");
    Reply::new(int(&f[0]) == 1, int(&f[1]), int(&f[2]), int(&f[3]), int(&f[4]))
}

/// `TIME` reply as microseconds.
fn time_us(v: &Value) -> i64 {
    let Value::Array(f) = v else { panic!("expected a TIME reply, got {v:?}") };
    int(&f[0]) * 1_000_000 + int(&f[1])
}

/// How much later than the first call each call read the clock (ms).
fn drifts(replies: &[Reply]) -> Vec<i64> {
    replies
        .iter()
        .enumerate()
        .map(|(i, r)| {
            assert!(r.allowed, "call {} denied: {r:?}", i + 1);
            (i as i64 + 1) * INTERVAL_MS - r.reset_after_ms
        })
        .collect()
}

/// What the probe answers and the drifts say, for the server at hand.
///
/// - `time_spread_us`: the server's own TIME, read right after the first
///   call and right before the last one.
/// - `elapsed`: the real time the whole transaction or script took, seen by
///   the client (a lower bound for the time spent inside it).
fn check(what: &str, v: &ServerVersion, replies: &[Reply], time_spread_us: i64, elapsed: Duration) {
    let drifts = drifts(replies);
    let spent = GAP * (CALLS as u32 - 1);
    // The waiting really happened inside the command.
    assert!(elapsed >= spent, "{what} on {v}: took only {elapsed:?}, expected at least {spent:?}");
    if has_cached_time(v) {
        // One time for every call: reset_after_ms is exactly 100 s, 200 s,
        // 300 s, ... although at least `spent` of real time passed between
        // the first call and the last.
        assert_eq!(drifts, vec![0; CALLS], "{what} on {v}: the calls saw different times");
        assert_eq!(time_spread_us, 0, "{what} on {v}: TIME moved inside one command");
    } else {
        // Redis 7.0: RedisModule_Milliseconds per call. The calls see the
        // clock move by (at least) the time spent between them: as much as
        // TIME moved between the first call and the last, minus 1 ms for
        // whole-millisecond truncation.
        assert!(drifts.windows(2).all(|w| w[0] <= w[1]), "{what} on {v}: drifts {drifts:?} not increasing");
        let last = *drifts.last().unwrap();
        assert!(
            time_spread_us >= spent.as_micros() as i64 * 9 / 10,
            "{what} on {v}: TIME moved by only {time_spread_us} us"
        );
        assert!(
            last * 1000 >= time_spread_us - 1000,
            "{what} on {v}: the last call read the clock {last} ms after the first, \
             but {time_spread_us} us passed in between (drifts {drifts:?})"
        );
        for (i, d) in drifts.iter().enumerate().skip(1) {
            assert!(*d >= 1, "{what} on {v}: call {} saw the first call's time (drifts {drifts:?})", i + 1);
        }
    }
}

/// Most busy-loop iterations per gap (about 0.3 s of Lua on a slow machine).
const MAX_ITERATIONS: u64 = 50_000_000;

/// Iterations of `x = x + j` that take about 1.5 `GAP` in this server's Lua,
/// measured (bounded: between 10^5 and `MAX_ITERATIONS`).
fn busy_loop_iterations(c: &mut Connection) -> u64 {
    const SCRIPT: &str = "local x = 0 for j = 1, tonumber(ARGV[1]) do x = x + j end return 0";
    let n0: u64 = 1_000_000;
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let _: i64 = redis::cmd("EVAL").arg(SCRIPT).arg(0).arg(n0).query(c).unwrap();
        best = best.min(t.elapsed());
    }
    let per_iter_ns = (best.as_nanos() as f64 / n0 as f64).max(0.1);
    let n = (GAP.as_nanos() as f64 * 1.5 / per_iter_ns) as u64;
    n.clamp(100_000, MAX_ITERATIONS)
}

/// RL.GCRA called `CALLS` times inside ONE script with a busy loop of about
/// `GAP` between the calls, and TIME after the first and before the last.
#[test]
fn rl_calls_inside_one_script_see_one_time_where_the_server_caches_it() {
    let s = server();
    let v = s.version();
    let mut c = s.conn();
    let mut n = busy_loop_iterations(&mut c);

    let script = r#"
        local out = {}
        local n = tonumber(ARGV[1])
        for i = 1, tonumber(ARGV[2]) do
            if i > 1 then
                local x = 0
                for j = 1, n do x = x + j end
            end
            if i == tonumber(ARGV[2]) then out[#out + 1] = redis.call('TIME') end
            out[#out + 1] = redis.call('RL.GCRA', KEYS[1], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
            if i == 1 then out[#out + 1] = redis.call('TIME') end
        end
        return out
    "#;
    // The calibration may have run on a busier CPU than the script does:
    // should the script take less than the time it must spend, run it again
    // (on a fresh key) with twice the iterations (bounded).
    let spent = GAP * (CALLS as u32 - 1);
    let (out, elapsed) = loop {
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(script).arg(1).arg(format!("st:eval:{n}")).arg(n).arg(CALLS).arg(&PROBE_ARGS[..]);
        let start = Instant::now();
        let out: Value = cmd.query(&mut c).unwrap();
        let elapsed = start.elapsed();
        if elapsed >= spent || n >= MAX_ITERATIONS {
            break (out, elapsed);
        }
        n = (n * 2).min(MAX_ITERATIONS);
    };

    // [rl1, time_a, rl2, ..., time_b, rlN]
    let Value::Array(items) = out else { panic!("script returned {out:?}") };
    assert_eq!(items.len(), CALLS + 2, "{items:?}");
    let time_a = time_us(&items[1]);
    let time_b = time_us(&items[items.len() - 2]);
    let replies: Vec<Reply> =
        items.iter().enumerate().filter(|(i, _)| *i != 1 && *i != items.len() - 2).map(|(_, v)| reply(v)).collect();
    check(&format!("EVAL ({n} busy iterations per gap)"), &v, &replies, time_b - time_a, elapsed);
}

/// RL.GCRA queued `CALLS` times in ONE MULTI/EXEC with DEBUG SLEEP of `GAP`
/// between the calls, and TIME after the first and before the last.
#[test]
fn rl_calls_inside_one_multi_exec_see_one_time_where_the_server_caches_it() {
    let s = server();
    let v = s.version();
    let mut c = s.conn();
    let sleep = format!("{:.3}", GAP.as_secs_f64());

    let mut pipe = redis::pipe();
    pipe.atomic();
    for i in 1..=CALLS {
        if i > 1 {
            pipe.cmd("DEBUG").arg("SLEEP").arg(&sleep);
        }
        if i == CALLS {
            pipe.cmd("TIME");
        }
        pipe.cmd("RL.GCRA").arg("st:multi").arg(&PROBE_ARGS[..]);
        if i == 1 {
            pipe.cmd("TIME");
        }
    }
    let start = Instant::now();
    let out: Vec<Value> = pipe.query(&mut c).unwrap();
    let elapsed = start.elapsed();

    let mut replies = Vec::new();
    let mut times = Vec::new();
    for item in &out {
        match item {
            Value::Array(f) if f.len() == 5 => replies.push(reply(item)),
            Value::Array(f) if f.len() == 2 => times.push(time_us(item)),
            Value::Okay => {} // DEBUG SLEEP
            other => panic!("unexpected EXEC element {other:?} in {out:?}"),
        }
    }
    assert_eq!((replies.len(), times.len()), (CALLS, 2), "{out:?}");
    check("MULTI/EXEC (DEBUG SLEEP between the calls)", &v, &replies, times[1] - times[0], elapsed);
}

/// Outside a transaction or script every command reads the time anew, on
/// every server: two calls a GAP apart see the clock move by the GAP. (The
/// contrast that makes the two tests above meaningful.)
#[test]
fn separate_rl_commands_each_read_the_time() {
    let s = server();
    let v = s.version();
    let mut c = s.conn();
    let first = common::limiter::rl(&mut c, &format!("RL.GCRA st:separate {}", PROBE_ARGS.join(" ")));
    let start = Instant::now();
    let _: () = redis::cmd("DEBUG").arg("SLEEP").arg(format!("{:.3}", GAP.as_secs_f64())).query(&mut c).unwrap();
    let second = common::limiter::rl(&mut c, &format!("RL.GCRA st:separate {}", PROBE_ARGS.join(" ")));
    let elapsed = start.elapsed();
    let d = drifts(&[first, second]);
    assert!(d[1] * 1000 >= GAP.as_micros() as i64 - 1000, "on {v}: drift {d:?} after {elapsed:?}");
    assert!(d[1] as u128 <= elapsed.as_millis() + 5, "on {v}: drift {d:?} after only {elapsed:?}");
}
