//! RL.TOP: who is limited, per node, in bounded memory (SPEC "Seeing who is
//! limited"; the README's "RL.TOP").

mod common;

use common::limiter::{err_of, rl};
use common::{Server, ServerOptions};

/// One `[key, count, error]` row.
type Row = (Vec<u8>, u64, u64);

fn server(module_args: &[&str]) -> Server {
    Server::start_with(ServerOptions {
        module_args: module_args.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    })
}

fn top(c: &mut redis::Connection, board: &str, count: usize) -> Vec<Row> {
    redis::cmd("RL.TOP").arg(board).arg("COUNT").arg(count).query(c).unwrap_or_else(|e| panic!("RL.TOP {board}: {e}"))
}

fn key(row: &Row) -> &str {
    std::str::from_utf8(&row.0).unwrap()
}

/// Runs `lines` (whitespace-separated words) pipelined, ignoring replies.
fn pipelined<I: IntoIterator<Item = String>>(c: &mut redis::Connection, lines: I) {
    let mut lines = lines.into_iter().peekable();
    while lines.peek().is_some() {
        let mut p = redis::pipe();
        for line in lines.by_ref().take(1000) {
            let mut words = line.split_whitespace();
            let mut cmd = redis::cmd(words.next().unwrap());
            for w in words {
                cmd.arg(w);
            }
            p.add_command(cmd).ignore();
        }
        let () = p.query(c).unwrap();
    }
}

fn used_memory(c: &mut redis::Connection) -> i64 {
    let info: String = redis::cmd("INFO").arg("memory").query(c).unwrap();
    let line = info.lines().find(|l| l.starts_with("used_memory:")).unwrap();
    line["used_memory:".len()..].trim().parse().unwrap()
}

#[test]
fn the_noisy_key_tops_the_denied_list_among_20000_others_with_a_sound_count() {
    let s = Server::start();
    let mut c = s.conn();
    // 20,000 keys denied once each (a cost above the limit), and one key,
    // allowed once an hour, hammered 2,001 times among them.
    let lines = (0..20_000).flat_map(|i| {
        let other = format!("RL.GCRA user:{i} 1 1000 COST 2");
        let noisy = (i % 10 == 0 || i == 19_999).then(|| "RL.GCRA noisy 1 3600000".to_string());
        std::iter::once(other).chain(noisy)
    });
    pipelined(&mut c, lines);
    let rows = top(&mut c, "DENIED", 5);
    assert_eq!(rows.len(), 5);
    assert_eq!(key(&rows[0]), "noisy", "{rows:?}");
    let (_, count, error) = rows[0];
    // 2,001 calls, the first allowed.
    assert!(count - error <= 2000 && 2000 <= count, "{rows:?}");
    // The others were denied once each: the bound holds for them too.
    for (k, count, error) in &rows[1..] {
        assert!(count - error <= 1 && 1 <= *count, "{k:?} {count} {error}");
    }
    // Highest first.
    assert!(rows.windows(2).all(|w| w[0].1 >= w[1].1), "{rows:?}");
}

#[test]
fn consumed_ranks_by_units_not_calls() {
    // Exact (every call sampled), then the default sampling.
    for args in [&["top-sample", "1"][..], &[]] {
        let s = server(args);
        let mut c = s.conn();
        let few = (0..10).map(|_| "RL.GCRA few 1000000 1000 COST 100".to_string());
        let many = (0..300).map(|_| "RL.TOKENBUCKET many 1000000 1000000 1000".to_string());
        pipelined(&mut c, few.chain(many));
        let rows = top(&mut c, "CONSUMED", 10);
        assert_eq!(rows.iter().map(key).collect::<Vec<_>>(), ["few", "many"], "{args:?}: {rows:?}");
        let truth = [1000, 300];
        for (row, truth) in rows.iter().zip(truth) {
            let (_, count, error) = *row;
            if args.is_empty() {
                // Sampled: within count ± error (three standard deviations).
                assert!(count.saturating_sub(error) <= truth && truth <= count + error, "{row:?}");
            } else {
                assert_eq!((count, error), (truth, 0), "{row:?}");
            }
        }
        // A cost of at least top-sample is always counted exactly.
        assert_eq!(rows[0].1, 1000, "{args:?}: {rows:?}");
        // Nothing was denied.
        assert!(top(&mut c, "DENIED", 10).is_empty());
    }
}

#[test]
fn peek_rl_peek_cost_0_and_errors_are_not_counted() {
    let s = Server::start();
    let mut c = s.conn();
    rl(&mut c, "RL.GCRA k 1 60000");
    assert!(!rl(&mut c, "RL.GCRA k 1 60000 PEEK").allowed);
    assert!(!rl(&mut c, "RL.PEEK GCRA k 1 60000").allowed);
    assert!(rl(&mut c, "RL.GCRA k 1 60000 COST 0").allowed);
    rl(&mut c, "RL.SLIDE s 5 1000 PEEK");
    err_of(&mut c, &["RL.GCRA", "k", "x", "60000"]);
    let consumed = top(&mut c, "CONSUMED", 10);
    assert!(top(&mut c, "DENIED", 10).is_empty());
    // Only the first call consumed (a cost of 1, sampled: 0 or 16 units).
    assert!(consumed.len() <= 1 && consumed.iter().all(|r| key(r) == "k"), "{consumed:?}");
}

#[test]
fn rl_all_counts_each_denying_key_once_per_call_and_each_cost_when_allowed() {
    let s = server(&["top-sample", "1"]);
    let mut c = s.conn();
    let all = |c: &mut redis::Connection, cost: u32| -> redis::Value {
        redis::cmd("RL.ALL")
            .arg(3)
            .arg(&["a", "b", "c"][..])
            .arg(&["GCRA", "100", "60000", "COST"][..])
            .arg(cost)
            .arg(&["GCRA", "2", "60000", "COST"][..])
            .arg(cost)
            .arg(&["SLIDE", "100", "60000"][..])
            .query(c)
            .unwrap()
    };
    all(&mut c, 2); // allowed: a 2, b 2, c 1
    all(&mut c, 1); // denied by b only
    all(&mut c, 3); // denied by b only (a would allow 3)
    let consumed = top(&mut c, "CONSUMED", 10);
    let rows: Vec<_> = consumed.iter().map(|r| (key(r), r.1, r.2)).collect();
    assert_eq!(rows, [("a", 2, 0), ("b", 2, 0), ("c", 1, 0)]);
    let denied = top(&mut c, "DENIED", 10);
    let rows: Vec<_> = denied.iter().map(|r| (key(r), r.1, r.2)).collect();
    assert_eq!(rows, [("b", 2, 0)]);
    // PEEK counts nowhere.
    let _: redis::Value =
        redis::cmd("RL.ALL").arg(1).arg("b").arg(&["GCRA", "2", "60000", "PEEK"][..]).query(&mut c).unwrap();
    assert_eq!(top(&mut c, "DENIED", 10).len(), 1);
    assert_eq!(top(&mut c, "DENIED", 10)[0].1, 2);
}

#[test]
fn reset_clears_both_lists() {
    let s = server(&["top-sample", "1"]);
    let mut c = s.conn();
    rl(&mut c, "RL.GCRA k 1 60000");
    rl(&mut c, "RL.GCRA k 1 60000");
    assert_eq!(top(&mut c, "DENIED", 1).len(), 1);
    assert_eq!(top(&mut c, "CONSUMED", 1).len(), 1);
    let ok: String = redis::cmd("RL.TOP").arg("RESET").query(&mut c).unwrap();
    assert_eq!(ok, "OK");
    assert!(top(&mut c, "DENIED", 10).is_empty());
    assert!(top(&mut c, "CONSUMED", 10).is_empty());
    // Counting starts again.
    rl(&mut c, "RL.GCRA k 1 60000");
    assert_eq!(top(&mut c, "DENIED", 10), [(b"k".to_vec(), 1, 0)]);
}

#[test]
fn long_keys_are_tracked_by_their_first_64_bytes_and_marked() {
    let s = Server::start();
    let mut c = s.conn();
    let long = "x".repeat(100);
    rl(&mut c, &format!("RL.GCRA {long} 1 1000 COST 2"));
    rl(&mut c, &format!("RL.GCRA {}y 1 1000 COST 2", "x".repeat(64)));
    let exact = "z".repeat(64);
    rl(&mut c, &format!("RL.GCRA {exact} 1 1000 COST 2"));
    let rows = top(&mut c, "DENIED", 10);
    let shortened = format!("{}...", "x".repeat(64));
    assert_eq!(rows, [(shortened.into_bytes(), 2, 0), (exact.into_bytes(), 1, 0)]);
}

#[test]
fn memory_stays_bounded_under_200000_distinct_keys() {
    // The summaries are the server's memory: 100,000 keys' worth shows.
    let off = server(&["top-capacity", "0"]);
    let big = server(&["top-capacity", "100000"]);
    let grown = used_memory(&mut big.conn()) - used_memory(&mut off.conn());
    assert!(grown > 2 * 100_000 * 64, "summaries of 100,000 keys added only {grown} bytes");

    // 200,000 distinct denied keys (a cost above the limit writes nothing)
    // leave used_memory where it was: the summary is allocated at load.
    let on = Server::start();
    let mut c = on.conn();
    pipelined(&mut c, (0..5_000).map(|i| format!("RL.GCRA warm:{i} 1 1000 COST 2")));
    let before = used_memory(&mut c);
    pipelined(&mut c, (0..200_000).map(|i| format!("RL.GCRA k:{i} 1 1000 COST 2")));
    let after = used_memory(&mut c);
    assert!(after - before < 256 * 1024, "used_memory grew by {} bytes", after - before);
    assert_eq!(top(&mut c, "DENIED", 1024).len(), 1024);

    // 200,000 distinct keys consumed (each then a limiter key, which
    // FLUSHALL removes again) leave used_memory where it was too.
    let on = server(&["top-sample", "1"]);
    let mut c = on.conn();
    pipelined(&mut c, (0..5_000).map(|i| format!("RL.GCRA warm:{i} 10 60000")));
    let () = redis::cmd("FLUSHALL").arg("SYNC").query(&mut c).unwrap();
    let before = used_memory(&mut c);
    pipelined(&mut c, (0..200_000).map(|i| format!("RL.GCRA k:{i} 10 60000")));
    let () = redis::cmd("FLUSHALL").arg("SYNC").query(&mut c).unwrap();
    let after = used_memory(&mut c);
    assert!((after - before).abs() < 256 * 1024, "used_memory moved by {} bytes", after - before);
    assert_eq!(top(&mut on.conn(), "CONSUMED", 1024).len(), 1024);
}

#[test]
fn top_capacity_0_turns_tracking_off() {
    let s = server(&["top-capacity", "0"]);
    let mut c = s.conn();
    rl(&mut c, "RL.GCRA k 1 60000");
    rl(&mut c, "RL.GCRA k 1 60000");
    for words in [&["RL.TOP", "DENIED"][..], &["RL.TOP", "CONSUMED", "COUNT", "5"], &["RL.TOP", "RESET"]] {
        let e = err_of(&mut c, words);
        assert!(e.contains("top-capacity 0"), "{words:?}: {e}");
    }
}

#[test]
fn count_and_subcommands_are_checked() {
    let s = server(&["top-capacity", "5"]);
    let mut c = s.conn();
    for i in 0..8 {
        rl(&mut c, &format!("RL.GCRA k{i} 1 1000 COST 2"));
    }
    // COUNT defaults to 10, at most top-capacity.
    let all: Vec<Row> = redis::cmd("RL.TOP").arg("denied").query(&mut c).unwrap();
    assert_eq!(all.len(), 5);
    assert_eq!(top(&mut c, "DENIED", 2).len(), 2);
    for (words, says) in [
        (&["RL.TOP", "DENIED", "COUNT", "0"][..], "COUNT is out of range (must be 1 to 5)"),
        (&["RL.TOP", "DENIED", "COUNT", "6"], "COUNT is out of range (must be 1 to 5)"),
        (&["RL.TOP", "DENIED", "COUNT", "x"], "COUNT is not an integer"),
        (&["RL.TOP", "DENIED", "COUNT"], "COUNT needs a value"),
        (&["RL.TOP", "DENIED", "LIMIT", "3"], "unknown option 'LIMIT'"),
        // After COUNT and its value, the next word is the unknown one.
        (&["RL.TOP", "DENIED", "COUNT", "3", "x"], "unknown option 'x'"),
        // The server checks each subcommand's arity, and answers an
        // unknown one, as for its own containers (SLOWLOG, CONFIG).
        (&["RL.TOP", "RESET", "COUNT", "3"], "ERR wrong number of arguments for 'RL.TOP|RESET' command"),
        (&["RL.TOP", "WHO"], "ERR unknown subcommand 'WHO'. Try RL.TOP HELP."),
        (&["RL.TOP"], "ERR wrong number of arguments for 'RL.TOP' command"),
    ] {
        let e = err_of(&mut c, words);
        assert!(e.contains(says), "{words:?}: {e}");
    }
}

#[test]
fn bad_module_arguments_refuse_to_load() {
    let s = Server::start_with(ServerOptions {
        load_module: false,
        extra_args: vec!["--enable-module-command".into(), "local".into()],
        ..Default::default()
    });
    let mut c = s.conn();
    let path = common::module_path();
    let load = |c: &mut redis::Connection, args: &[&str]| -> redis::RedisResult<()> {
        redis::cmd("MODULE").arg("LOAD").arg(path.to_str().unwrap()).arg(args).query(c)
    };
    for args in [
        &["top-capacity", "-1"][..],
        &["top-capacity"],
        &["top-sample", "0"],
        &["top-capacity", "1000001"],
        &["top-sample", "1048577"],
        &["top-size", "5"],
    ] {
        let e = load(&mut c, args).unwrap_err().to_string();
        assert!(e.contains("Error loading the extension"), "{args:?}: {e}");
    }
    load(&mut c, &["TOP-CAPACITY", "3", "top-sample", "2"]).unwrap();
    for i in 0..5 {
        rl(&mut c, &format!("RL.GCRA k{i} 1 1000 COST 2"));
    }
    assert_eq!(top(&mut c, "DENIED", 3).len(), 3);
    assert!(err_of(&mut c, &["RL.TOP", "DENIED", "COUNT", "4"]).contains("1 to 3"));
}

#[test]
fn rl_top_is_a_container_of_subcommands_without_keys() {
    let s = Server::start();
    let mut c = s.conn();
    let info: redis::Value = redis::cmd("COMMAND").arg("INFO").arg("RL.TOP").query(&mut c).unwrap();
    let redis::Value::Array(rows) = &info else { panic!("{info:?}") };
    let redis::Value::Array(row) = &rows[0] else { panic!("{info:?}") };
    // Arity -2, no key: first, last, step 0; and four subcommands
    // (tests/command_info.rs checks each one's flags and docs).
    assert_eq!(row[1], redis::Value::Int(-2));
    assert_eq!(&row[3..6], [redis::Value::Int(0), redis::Value::Int(0), redis::Value::Int(0)]);
    let redis::Value::Array(subcommands) = &row[9] else { panic!("{info:?}") };
    assert_eq!(subcommands.len(), 4, "{info:?}");
    // No subcommand writes.
    assert!(!format!("{info:?}").contains("write"), "{info:?}");
    // HELP lists every subcommand.
    let help: Vec<String> = redis::cmd("RL.TOP").arg("HELP").query(&mut c).unwrap();
    for sub in ["DENIED", "CONSUMED", "RESET", "HELP"] {
        assert!(help.iter().any(|l| l.starts_with(sub)), "{sub}: {help:?}");
    }
}

/// Reading the board is harmless; RESET is an admin action, as SLOWLOG
/// RESET is: a user without admin rights reads both lists but cannot reset
/// them. By name (`-rl.top|reset`) on every server; by category (`-@admin`)
/// where the server gives module commands categories (Redis 7.2+, Valkey).
#[test]
fn a_user_without_admin_rights_reads_the_board_but_cannot_reset_it() {
    let s = server(&["top-sample", "1"]);
    let mut admin = s.conn();
    rl(&mut admin, "RL.GCRA k 1 60000");
    rl(&mut admin, "RL.GCRA k 1 60000");
    let v = s.version();
    let mut rules = vec![];
    if v.is_valkey() || v.at_least(7, 2, 0) {
        rules.push(("by_category", "-@admin"));
    }
    rules.push(("by_name", "-rl.top|reset"));
    for (user, rule) in rules {
        let setuser = ["ACL", "SETUSER", user, "on", ">pw", "~*", "&*", "+@all", rule];
        common::limiter::raw(&mut admin, &setuser).unwrap_or_else(|e| panic!("{setuser:?}: {e}"));
        let mut u = s.conn();
        common::limiter::raw(&mut u, &["AUTH", user, "pw"]).expect("AUTH");
        assert_eq!(top(&mut u, "DENIED", 10), [(b"k".to_vec(), 1, 0)], "{rule} on {v}");
        assert_eq!(top(&mut u, "CONSUMED", 10), [(b"k".to_vec(), 1, 0)], "{rule} on {v}");
        let e = err_of(&mut u, &["RL.TOP", "RESET"]);
        assert!(e.starts_with("NOPERM"), "{rule} on {v}: {e}");
        // Nothing was reset.
        assert_eq!(top(&mut admin, "DENIED", 10).len(), 1, "{rule} on {v}");
    }
    // A user with every right resets them.
    let ok: String = redis::cmd("RL.TOP").arg("RESET").query(&mut admin).unwrap();
    assert_eq!(ok, "OK");
    assert!(top(&mut admin, "DENIED", 10).is_empty());
}

/// Where redis-py is for `examples/rl-top` (`scripts/test-examples.sh`
/// installs it into `examples/python/.deps`; `RL_TOP_PYTHONPATH` overrides).
fn redis_py_path() -> std::path::PathBuf {
    let path = match std::env::var_os("RL_TOP_PYTHONPATH") {
        Some(p) if !p.is_empty() => std::path::PathBuf::from(p),
        _ => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/python/.deps"),
    };
    assert!(
        path.join("redis").is_dir(),
        "rl-top needs redis-py in {}: run scripts/test-examples.sh once (it installs it there), \
         or set RL_TOP_PYTHONPATH",
        path.display()
    );
    path
}

#[test]
fn rl_top_merges_every_master_of_a_cluster() {
    use common::cluster::{slot_of, Cluster, MASTERS};
    let cluster = Cluster::start();
    let mut client = cluster.client();
    // A noisy key denied 300 times, and 600 others denied once each, spread
    // over the three masters.
    rl_cluster(&mut client, "noisy", "1", "3600000", "1");
    for _ in 0..300 {
        rl_cluster(&mut client, "noisy", "1", "3600000", "1");
    }
    for i in 0..600 {
        rl_cluster(&mut client, &format!("user:{i}"), "1", "1000", "2");
    }
    let owners: std::collections::HashSet<usize> =
        (0..600).map(|i| cluster.owner(slot_of(&format!("user:{i}")))).collect();
    assert_eq!(owners.len(), MASTERS);

    let tool = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/rl-top/rl_top.py");
    let out = std::process::Command::new("python3")
        .arg(&tool)
        .args(["--url", &cluster.urls()[0], "--once", "--count", "5"])
        .env("PYTHONPATH", redis_py_path())
        .output()
        .expect("run python3");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "rl-top failed: {}\n{text}", String::from_utf8_lossy(&out.stderr));

    // The first header says how many nodes and denials it merged.
    let head = text.lines().next().unwrap();
    assert!(head.contains(&format!("{MASTERS} nodes")) && head.contains("900 denials"), "{text}");
    // The denied table: the noisy key first, with exactly its 300 denials.
    let denied: Vec<Vec<&str>> = text
        .lines()
        .skip_while(|l| !l.starts_with("TOP DENIED"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(denied.len(), 5, "{text}");
    assert_eq!(&denied[0][..3], ["noisy", "300", "0"], "{text}");
    // Each merged count is the sum of the masters' own RL.TOP counts.
    for row in &denied {
        let mut sum = 0;
        for n in &cluster.nodes[..MASTERS] {
            let rows = top(&mut n.conn(), "DENIED", 1024);
            sum += rows.iter().filter(|r| key(r) == row[0]).map(|r| r.1).sum::<u64>();
        }
        assert_eq!(row[1], sum.to_string(), "{row:?}\n{text}");
    }
    // And the retry-after histogram adds up to every denial: 300 within the
    // hour, 600 never.
    let hist: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("RETRY AFTER")).collect();
    assert!(hist.iter().any(|l| l.split_whitespace().take(2).eq(["<=1h", "300"])), "{text}");
    assert!(hist.iter().any(|l| l.split_whitespace().take(2).eq(["never", "600"])), "{text}");
}

/// `RL.GCRA key limit period COST cost` through the cluster client.
fn rl_cluster(c: &mut redis::cluster::ClusterConnection, key: &str, limit: &str, period: &str, cost: &str) {
    let _: Vec<i64> = redis::cmd("RL.GCRA").arg(key).arg(limit).arg(period).arg("COST").arg(cost).query(c).unwrap();
}
