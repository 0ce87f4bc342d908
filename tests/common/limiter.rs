//! Calling the limiter commands from tests.

use redis::{Connection, Value};

/// The five reply fields of a limiter command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    pub allowed: bool,
    pub limit: i64,
    pub remaining: i64,
    pub retry_after_ms: i64,
    pub reset_after_ms: i64,
}

impl Reply {
    pub fn new(allowed: bool, limit: i64, remaining: i64, retry_after_ms: i64, reset_after_ms: i64) -> Reply {
        Reply { allowed, limit, remaining, retry_after_ms, reset_after_ms }
    }
}

/// [`Reply::new`], short, for tables of expected replies.
pub fn r(allowed: bool, limit: i64, remaining: i64, retry: i64, reset: i64) -> Reply {
    Reply::new(allowed, limit, remaining, retry, reset)
}

/// Runs a command given as words; any argument may be raw bytes.
pub fn raw<A: AsRef<[u8]>>(con: &mut Connection, words: &[A]) -> redis::RedisResult<Value> {
    let mut cmd = redis::cmd(std::str::from_utf8(words[0].as_ref()).expect("command name"));
    for w in &words[1..] {
        cmd.arg(w.as_ref());
    }
    cmd.query(con)
}

/// Runs a limiter command written as one string ("RL.GCRA k 10 1000 PEEK")
/// and parses its RESP2 reply, panicking with the error text otherwise.
pub fn rl(con: &mut Connection, line: &str) -> Reply {
    try_rl(con, line).unwrap_or_else(|e| panic!("{line}: {e}"))
}

pub fn try_rl(con: &mut Connection, line: &str) -> redis::RedisResult<Reply> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let v: Vec<i64> = redis::from_redis_value(&raw(con, &words)?)?;
    assert_eq!(v.len(), 5, "{line}: reply {v:?}");
    assert!(v[0] == 0 || v[0] == 1, "{line}: allowed {}", v[0]);
    Ok(Reply::new(v[0] == 1, v[1], v[2], v[3], v[4]))
}

/// The error text of a command that must fail.
pub fn err_of<A: AsRef<[u8]>>(con: &mut Connection, words: &[A]) -> String {
    match raw(con, words) {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => {
            // The redis crate splits "CODE detail"; put it back together.
            match (e.code(), e.detail()) {
                (Some(code), Some(detail)) => format!("{code} {detail}"),
                (Some(code), None) => code.to_string(),
                _ => e.to_string(),
            }
        }
    }
}

/// DUMP of a key (None if missing): equal dumps mean equal state.
pub fn dump(con: &mut Connection, key: &str) -> Option<Vec<u8>> {
    redis::cmd("DUMP").arg(key).query(con).expect("DUMP")
}

pub fn pttl(con: &mut Connection, key: &str) -> i64 {
    redis::cmd("PTTL").arg(key).query(con).expect("PTTL")
}

pub fn exists(con: &mut Connection, key: &str) -> bool {
    redis::cmd("EXISTS").arg(key).query::<i64>(con).expect("EXISTS") == 1
}

/// The three commands, as (name, arguments after the key) for a limit of
/// `n` per `ms`.
pub fn all_commands(n: u64, ms: u64) -> [(&'static str, String); 3] {
    [("RL.GCRA", format!("{n} {ms}")), ("RL.TOKENBUCKET", format!("{n} {n} {ms}")), ("RL.SLIDE", format!("{n} {ms}"))]
}

/// Starts `clients` connections to `url`, releases them at once (a
/// barrier), has each make `calls` calls of `call`, and returns how many
/// of all the calls `call` reported allowed.
pub fn allowed_by_concurrent_clients(
    url: &str,
    clients: usize,
    calls: usize,
    call: impl Fn(&mut Connection) -> bool + Send + Sync + 'static,
) -> usize {
    let call = std::sync::Arc::new(call);
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(clients));
    let workers: Vec<_> = (0..clients)
        .map(|_| {
            let (url, call, barrier) = (url.to_string(), call.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut c = redis::Client::open(url.as_str()).unwrap().get_connection().unwrap();
                barrier.wait();
                (0..calls).filter(|_| call(&mut c)).count()
            })
        })
        .collect();
    workers.into_iter().map(|w| w.join().unwrap()).sum()
}

/// RL.ALL's reply as (allowed, retry_after_ms, each key's reply as integers).
pub fn all_ints(con: &mut Connection, line: &str) -> (bool, i64, Vec<Vec<i64>>) {
    let words: Vec<&str> = line.split(' ').collect();
    let Value::Array(items) = raw(con, &words).unwrap_or_else(|e| panic!("{line}: {e}")) else { panic!("{line}") };
    let allowed: i64 = redis::from_redis_value(&items[0]).unwrap();
    let retry: i64 = redis::from_redis_value(&items[1]).unwrap();
    let limits = items[2..].iter().map(|v| redis::from_redis_value(v).unwrap()).collect();
    (allowed == 1, retry, limits)
}
