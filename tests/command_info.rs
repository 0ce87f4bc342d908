//! Invariant 8, on one server: every command declares its keys the way
//! Redis's own commands do, so `COMMAND GETKEYS`, `COMMAND INFO` and
//! `COMMAND DOCS` answer for it as they answer for INCR, SINTERCARD or
//! RESTORE, and cluster clients and proxies can route it.

mod common;

/// The release each command appeared in: 0.1.0 had the first three kinds,
/// RL.ALL and CL.THROTTLE; the rest came with 0.2.0.
fn since(cmd: &str) -> &'static str {
    match cmd {
        "RL.GCRA" | "RL.TOKENBUCKET" | "RL.SLIDE" | "RL.ALL" | "CL.THROTTLE" | "RL.APPLY" => "0.1.0",
        _ => "0.2.0",
    }
}

use redis::{Connection, Value};

use common::limiter::{err_of, raw};
use common::Server;

/// A reply as compact text: arrays in brackets, words separated by spaces.
fn text(v: &Value) -> String {
    match v {
        Value::Nil => "nil".into(),
        Value::Int(i) => i.to_string(),
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::Okay => "OK".into(),
        Value::Array(items) | Value::Set(items) => {
            format!("[{}]", items.iter().map(text).collect::<Vec<_>>().join(" "))
        }
        Value::Map(pairs) => {
            format!("[{}]", pairs.iter().map(|(k, v)| format!("{} {}", text(k), text(v))).collect::<Vec<_>>().join(" "))
        }
        other => format!("{other:?}"),
    }
}

fn query(con: &mut Connection, line: &str) -> Value {
    let words: Vec<&str> = line.split(' ').collect();
    raw(con, &words).unwrap_or_else(|e| panic!("{line}: {e}"))
}

/// Field `i` of `COMMAND INFO <name>` (0 name, 1 arity, 2 flags, 3-5
/// first/last/step, 6 ACL categories, 7 tips, 8 key specs).
fn info_field(con: &mut Connection, name: &str, i: usize) -> String {
    let Value::Array(commands) = query(con, &format!("COMMAND INFO {name}")) else { panic!("COMMAND INFO {name}") };
    let Value::Array(fields) = &commands[0] else { panic!("{name} is not a command: {commands:?}") };
    text(&fields[i])
}

/// `COMMAND DOCS <name>` as text, without the leading name. Servers that
/// fill in `display_text` for every argument (Valkey) do so for their own
/// commands too; it is dropped here, and checked once on its own.
fn docs(con: &mut Connection, name: &str) -> String {
    let Value::Array(pair) = query(con, &format!("COMMAND DOCS {name}")) else { panic!("COMMAND DOCS {name}") };
    text(&without_display_text(&pair[1]))
}

/// The reply with every `display_text <value>` pair left out.
fn without_display_text(v: &Value) -> Value {
    match v {
        Value::Array(items) => {
            let mut kept = Vec::new();
            let mut items = items.iter();
            while let Some(item) = items.next() {
                if matches!(item, Value::BulkString(b) if b == b"display_text") {
                    items.next();
                } else {
                    kept.push(without_display_text(item));
                }
            }
            Value::Array(kept)
        }
        other => other.clone(),
    }
}

#[test]
fn arguments_have_a_display_text_where_the_servers_own_commands_do() {
    let s = Server::start();
    let mut con = s.conn();
    let shown = |con: &mut Connection, name: &str| {
        let Value::Array(pair) = query(con, &format!("COMMAND DOCS {name}")) else { panic!("COMMAND DOCS {name}") };
        text(&pair[1]).matches("display_text").count()
    };
    let builtin = shown(&mut con, "INCR") > 0;
    // RL.GCRA's arguments: key, limit, period_ms, BURST, MAXWAIT, PEEK, and
    // COST and REFUND inside their one-of (which has none of its own).
    assert_eq!(shown(&mut con, "RL.GCRA"), if builtin { 8 } else { 0 });
}

#[test]
fn command_getkeys_names_the_keys_of_every_command() {
    let s = Server::start();
    let mut con = s.conn();
    let cases: &[(&str, &str)] = &[
        ("RL.GCRA k 10 1000", "[k]"),
        ("RL.GCRA k 10 1000 BURST 5 COST 2 PEEK", "[k]"),
        ("RL.TOKENBUCKET k 10 1 1000", "[k]"),
        ("RL.TOKENBUCKET k 10 1 1000 COST 0 PEEK", "[k]"),
        ("RL.SLIDE k 10 1000", "[k]"),
        ("RL.LOG k 10 1000", "[k]"),
        ("RL.SLIDE k 10 1000 COST 3", "[k]"),
        ("RL.APPLY k payload", "[k]"),
        ("RL.ALL 1 a GCRA 1 1000", "[a]"),
        ("RL.ALL 2 a b GCRA 1 1000 SLIDE 1 1 PEEK", "[a b]"),
        ("RL.ALL 3 u t g GCRA 1 1000 BURST 2 SLIDE 1 1 COST 2 TOKENBUCKET 1 1 1", "[u t g]"),
        // Keys are the arguments after numkeys, whatever they look like.
        ("RL.ALL 2 GCRA SLIDE GCRA 1 1000 SLIDE 1 1", "[GCRA SLIDE]"),
    ];
    for (line, want) in cases {
        assert_eq!(text(&query(&mut con, &format!("COMMAND GETKEYS {line}"))), *want, "{line}");
    }

    // And what each command does to them.
    let flagged: &[(&str, &str)] = &[
        ("RL.GCRA k 10 1000", "[[k [RW access update]]]"),
        ("RL.TOKENBUCKET k 10 1 1000", "[[k [RW access update]]]"),
        ("RL.SLIDE k 10 1000", "[[k [RW access update]]]"),
        ("RL.ALL 2 a b GCRA 1 1000 SLIDE 1 1", "[[a [RW access update]] [b [RW access update]]]"),
        ("RL.APPLY k payload", "[[k [OW update]]]"),
    ];
    for (line, want) in flagged {
        assert_eq!(text(&query(&mut con, &format!("COMMAND GETKEYSANDFLAGS {line}"))), *want, "{line}");
    }

    // A numkeys that names no keys, or more keys than there are arguments,
    // is an error, as for SINTERCARD; and too few arguments for the arity.
    for line in ["RL.ALL 0 a b c d", "RL.ALL 9 a b c d e", "RL.ALL x a b c d e", "RL.ALL -1 a b c d e"] {
        let line = format!("COMMAND GETKEYS {line}");
        let words: Vec<&str> = line.split(' ').collect();
        assert!(err_of(&mut con, &words).starts_with("ERR Invalid arguments"), "{line}");
    }
    let e = err_of(&mut con, &["COMMAND", "GETKEYS", "RL.GCRA", "k", "10"]);
    assert!(e.starts_with("ERR Invalid number of arguments"), "{e}");
}

#[test]
fn the_limiters_declare_their_key_as_incr_does() {
    let s = Server::start();
    let mut con = s.conn();
    let incr = info_field(&mut con, "INCR", 8);
    assert_eq!(incr, "[[flags [RW access update] begin_search [type index spec [index 1]] find_keys [type range spec [lastkey 0 keystep 1 limit 0]]]]");
    for name in ["RL.GCRA", "RL.TOKENBUCKET", "RL.SLIDE", "RL.LOG", "RL.QUOTA", "RL.ACQUIRE", "RL.RELEASE", "RL.RENEW"]
    {
        assert_eq!(info_field(&mut con, name, 8), incr, "{name} key specs");
        assert_eq!((3..6).map(|i| info_field(&mut con, name, i)).collect::<Vec<_>>(), ["1", "1", "1"], "{name}");
    }
}

#[test]
fn rl_all_declares_its_keys_as_sintercard_does_but_writes_them() {
    let s = Server::start();
    let mut con = s.conn();
    let sintercard = info_field(&mut con, "SINTERCARD", 8);
    let rl_all = info_field(&mut con, "RL.ALL", 8);
    assert_eq!(rl_all, sintercard.replace("[RO access]", "[RW access update]"));
    assert_eq!(rl_all, "[[flags [RW access update] begin_search [type index spec [index 1]] find_keys [type keynum spec [keynumidx 0 firstkey 1 keystep 1]]]]");
    // No first/last/step can describe keys after a count: 0 0 0 and
    // "movablekeys", again as SINTERCARD.
    for i in 3..6 {
        assert_eq!(info_field(&mut con, "RL.ALL", i), info_field(&mut con, "SINTERCARD", i));
    }
    assert!(info_field(&mut con, "RL.ALL", 2).contains("movablekeys"));
}

#[test]
fn rl_apply_declares_its_key_as_restore_does() {
    let s = Server::start();
    let mut con = s.conn();
    assert_eq!(info_field(&mut con, "RL.APPLY", 8), info_field(&mut con, "RESTORE", 8));
}

#[test]
fn command_info_reports_arity_and_honest_flags() {
    let s = Server::start();
    let mut con = s.conn();
    let cases: &[(&str, &str, &str)] = &[
        ("RL.GCRA", "-4", "[write denyoom module fast]"),
        ("RL.TOKENBUCKET", "-5", "[write denyoom module fast]"),
        ("RL.SLIDE", "-4", "[write denyoom module fast]"),
        ("RL.LOG", "-4", "[write denyoom module fast]"),
        ("RL.QUOTA", "-4", "[write denyoom module fast]"),
        ("RL.ACQUIRE", "-4", "[write denyoom module fast]"),
        // Ending or extending a lease takes no memory: allowed under OOM.
        ("RL.RELEASE", "3", "[write module fast]"),
        ("RL.RENEW", "4", "[write module fast]"),
        // O(N) in the keys: not fast.
        ("RL.ALL", "-6", "[write denyoom module movablekeys]"),
        // A replica must apply what its master did, memory or not.
        ("RL.APPLY", "3", "[write module fast]"),
    ];
    for (name, arity, flags) in cases {
        assert_eq!(info_field(&mut con, name, 0), *name);
        assert_eq!(info_field(&mut con, name, 1), *arity, "{name} arity");
        assert_eq!(info_field(&mut con, name, 2), *flags, "{name} flags");
    }
}

#[test]
fn the_server_enforces_the_declared_arity() {
    let s = Server::start();
    let mut con = s.conn();
    for line in [
        "RL.GCRA k 10",
        "RL.TOKENBUCKET k 10 1",
        "RL.SLIDE k 10",
        "RL.QUOTA k 10",
        "RL.ALL 1 k SLIDE 10",
        "RL.APPLY k",
        "RL.ACQUIRE k 1",
        "RL.RELEASE k",
        "RL.RENEW k x",
    ] {
        let words: Vec<&str> = line.split(' ').collect();
        let e = err_of(&mut con, &words);
        assert!(e.starts_with("ERR wrong number of arguments"), "{line}: {e}");
    }
}

#[test]
fn acl_categories_are_set_where_the_server_can_set_them() {
    let s = Server::start();
    let mut con = s.conn();
    // RedisModule_SetCommandACLCategories arrived in Redis 7.2 (Valkey
    // reports a 7.2 compatibility version): on 7.0 module commands belong
    // to no category.
    let info: String = redis::cmd("INFO").arg("server").query(&mut con).unwrap();
    let version: Vec<u32> = info
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:"))
        .expect("redis_version")
        .trim()
        .split('.')
        .map(|n| n.parse().expect("a version number"))
        .collect();
    let can_set = version[..2] >= [7, 2][..];
    let cases: &[(&str, &str)] = &[
        ("RL.GCRA", "[@write @fast]"),
        ("RL.TOKENBUCKET", "[@write @fast]"),
        ("RL.SLIDE", "[@write @fast]"),
        ("RL.LOG", "[@write @fast]"),
        ("RL.QUOTA", "[@write @fast]"),
        ("RL.ACQUIRE", "[@write @fast]"),
        ("RL.RELEASE", "[@write @fast]"),
        ("RL.RENEW", "[@write @fast]"),
        ("RL.ALL", "[@write @slow]"),
        ("RL.APPLY", "[@write @fast]"),
    ];
    for (name, want) in cases {
        let categories = info_field(&mut con, name, 6);
        assert_eq!(categories, if can_set { *want } else { "[]" }, "{name} on {version:?}");
    }
}

#[test]
fn command_docs_describe_every_command_and_argument() {
    let s = Server::start();
    let mut con = s.conn();
    let opt = |name: &str, token: &str, summary: &str| {
        format!("[name {name} type integer token {token} summary {summary} flags [optional]]")
    };
    let cost = "[name amount type oneof flags [optional] arguments \
                [[name cost type integer token COST summary the weight of this request (default 1)] \
                [name refund type integer token REFUND summary units to give back (reserve, then settle)]]]";
    let burst = opt("burst", "BURST", "unit requests admitted back to back (default limit)");
    let maxwait = opt(
        "ms",
        "MAXWAIT",
        "book the earliest start within ms (0 to 1000000) if it does not conform now; the reply adds wait_ms",
    );
    let peek = "[name peek type pure-token token PEEK summary answer as if consumed, but consume and write nothing flags [optional]]";
    let key = "[name key type key key_spec_index 0]";
    let int = |name: &str| format!("[name {name} type integer]");
    let head = |cmd: &str, summary: &str, complexity: &str| {
        let since = since(cmd);
        format!("summary {summary} since {since} group module complexity {complexity} module rl")
    };

    assert_eq!(
        docs(&mut con, "RL.GCRA"),
        format!(
            "[{} arguments [{key} {} {} {burst} {cost} {maxwait} {peek}]]",
            head("RL.GCRA", "Checks and consumes a GCRA rate limit: limit per period_ms, with bursts", "O(1)"),
            int("limit"),
            int("period_ms")
        )
    );
    assert_eq!(
        docs(&mut con, "RL.TOKENBUCKET"),
        format!(
            "[{} arguments [{key} {} {} {} {cost} {maxwait} {peek}]]",
            head(
                "RL.TOKENBUCKET",
                "Takes tokens from a bucket of capacity tokens refilled at refill_tokens per refill_period_ms",
                "O(1)"
            ),
            int("capacity"),
            int("refill_tokens"),
            int("refill_period_ms")
        )
    );
    assert_eq!(
        docs(&mut con, "RL.SLIDE"),
        format!(
            "[{} arguments [{key} {} {} {cost} {peek}]]",
            head("RL.SLIDE", "Checks and counts a request against a sliding window of limit per window_ms", "O(1)"),
            int("limit"),
            int("window_ms")
        )
    );
    assert_eq!(
        docs(&mut con, "RL.LOG"),
        format!(
            "[{} arguments [{key} {} {} {cost} {peek}]]",
            head(
                "RL.LOG",
                "Checks and logs a request against an exact sliding log of limit per window_ms",
                "O(log N) where N is the number of entries in the log, plus the entries that age out"
            ),
            int("limit"),
            int("window_ms")
        )
    );
    let period =
        "[name period type string summary HOUR, DAY, WEEK, MONTH or YEAR, or a number of ms for fixed windows]";
    let zone = "[name zone type string token TZ summary an IANA time zone for calendar windows (default UTC) flags [optional]]";
    assert_eq!(
        docs(&mut con, "RL.QUOTA"),
        format!(
            "[{} arguments [{key} {} {period} {zone} {cost} {peek}]]",
            head(
                "RL.QUOTA",
                "Counts requests against a quota of limit per calendar window (in a time zone) or per fixed window",
                "O(1)"
            ),
            int("limit"),
        )
    );
    let lease_cost = opt("cost", "COST", "the units this lease holds (default 1)");
    let id = "[name id type string token ID summary names the lease (1 to 128 bytes): a retried acquire renews it, \
              never takes a second slot flags [optional]]";
    let wait = "[name timeout_ms type integer token WAIT summary wait up to timeout_ms for the lease, first in, first \
                out (1 to 600000) flags [optional]]";
    let leases = "O(log N) where N is the number of leases held, plus the expired leases it drops; after a backward clock jump too: O(log N) reads, and the call that repairs the set moves every deadline back in O(1)";
    assert_eq!(
        docs(&mut con, "RL.ACQUIRE"),
        format!(
            "[{} arguments [{key} {} {} {lease_cost} {id} {wait} {peek}]]",
            head(
                "RL.ACQUIRE",
                "Acquires a lease of cost units on a concurrency limit of limit units held at once, for lease_ms",
                leases
            ),
            int("limit"),
            int("lease_ms")
        )
    );
    assert_eq!(
        docs(&mut con, "RL.RELEASE"),
        format!(
            "[{} arguments [{key} [name id type string]]]",
            head("RL.RELEASE", "Ends a live lease of a concurrency limit: 1 if it was live, else 0", leases)
        )
    );
    assert_eq!(
        docs(&mut con, "RL.RENEW"),
        format!(
            "[{} arguments [{key} [name id type string] {}]]",
            head(
                "RL.RENEW",
                "Extends a live lease of a concurrency limit to lease_ms from now: 1 if it was live, else 0",
                leases
            ),
            int("lease_ms")
        )
    );
    let specs = format!(
        "[name gcra type block token GCRA arguments [{} {} {burst} {cost}]] \
         [name tokenbucket type block token TOKENBUCKET arguments [{} {} {} {cost}]] \
         [name slide type block token SLIDE arguments [{} {} {cost}]] \
         [name log type block token LOG arguments [{} {} {cost}]] \
         [name quota type block token QUOTA arguments [{} {period} {zone} {cost}]] \
         [name concurrency type block token CONCURRENCY arguments [{} {} {lease_cost} {id}]]",
        int("limit"),
        int("period_ms"),
        int("capacity"),
        int("refill_tokens"),
        int("refill_period_ms"),
        int("limit"),
        int("window_ms"),
        int("limit"),
        int("window_ms"),
        int("limit"),
        int("limit"),
        int("lease_ms")
    );
    let all_maxwait = opt("ms", "MAXWAIT", "every spec a GCRA or TOKENBUCKET: book one start for every key within ms");
    assert_eq!(
        docs(&mut con, "RL.ALL"),
        format!(
            "[{} arguments [{} [name key type key key_spec_index 0 flags [multiple]] \
             [name spec type oneof summary one per key, in key order flags [multiple] arguments [{specs}]] {all_maxwait} {peek}]]",
            head(
                "RL.ALL",
                "Checks several rate limits as one decision: consumes from every key only if all allow",
                "O(N) where N is the number of keys"
            ),
            int("numkeys")
        )
    );
    assert_eq!(
        docs(&mut con, "RL.APPLY"),
        format!(
            "[{} arguments [{key} [name payload type string]]]",
            head("RL.APPLY", "Internal: stores a limiter state propagated from the master or the AOF", "O(1)")
        )
    );
}

/// `[name, value, name, value, ...]` (a RESP2 map) as pairs.
fn pairs(v: &Value) -> Vec<(String, &Value)> {
    let Value::Array(items) = v else { panic!("not an array: {v:?}") };
    items.chunks(2).map(|kv| (text(&kv[0]), &kv[1])).collect()
}

/// RL.TOP is a container, as SLOWLOG: reading the board (DENIED,
/// CONSUMED) is `readonly`, RESET carries what SLOWLOG RESET carries
/// (`admin`, its categories and its tips), so ACL rules and cluster clients
/// can tell them apart; COMMAND INFO and COMMAND DOCS show each.
#[test]
fn rl_top_declares_each_subcommand_with_its_own_flags_and_docs() {
    let s = Server::start();
    let mut con = s.conn();
    let v = s.version();
    let can_set = v.is_valkey() || v.at_least(7, 2, 0);

    // COMMAND INFO: field 9 lists the subcommands, each as a command.
    let subcommands = |con: &mut Connection, name: &str| -> Vec<Vec<String>> {
        let Value::Array(commands) = query(con, &format!("COMMAND INFO {name}")) else { panic!() };
        let Value::Array(fields) = &commands[0] else { panic!("{name}: {commands:?}") };
        let Value::Array(subs) = &fields[9] else { panic!("{name}: {fields:?}") };
        let mut subs: Vec<Vec<String>> = subs
            .iter()
            .map(|s| match s {
                Value::Array(f) => f.iter().map(text).collect(),
                other => panic!("{other:?}"),
            })
            .collect();
        subs.sort();
        subs
    };
    let sorted = |words: &str| {
        let mut w: Vec<&str> = words.trim_matches(['[', ']']).split(' ').filter(|w| !w.is_empty()).collect();
        w.sort();
        w.join(" ")
    };
    let top = subcommands(&mut con, "RL.TOP");
    let names: Vec<&str> = top.iter().map(|f| f[0].as_str()).collect();
    assert_eq!(names, ["RL.TOP|CONSUMED", "RL.TOP|DENIED", "RL.TOP|HELP", "RL.TOP|RESET"]);
    // name, arity, flags, first, last, step, categories, tips.
    let row = |name: &str| top.iter().find(|f| f[0] == name).unwrap().clone();
    let categories = |c: &'static str| if can_set { c } else { "[]" };
    for name in ["RL.TOP|DENIED", "RL.TOP|CONSUMED"] {
        let f = row(name);
        assert_eq!((f[1].as_str(), sorted(&f[2]).as_str()), ("-2", "loading module readonly stale"), "{name}");
        assert_eq!(&f[3..8], ["0", "0", "0", categories("[@read @slow]"), "[]"], "{name}");
    }
    let reset = row("RL.TOP|RESET");
    let slowlog_reset = subcommands(&mut con, "SLOWLOG").into_iter().find(|f| f[0] == "slowlog|reset").unwrap();
    assert_eq!(reset[1], "2");
    assert_eq!(sorted(&reset[2]), sorted(&format!("module {}", slowlog_reset[2].trim_matches(['[', ']']))));
    assert_eq!(reset[6], categories("[@admin @slow @dangerous]"));
    if can_set {
        assert_eq!(reset[6], slowlog_reset[6]);
    }
    assert_eq!(reset[7], "[request_policy:all_nodes response_policy:all_succeeded]");
    assert_eq!(reset[7], slowlog_reset[7]);
    let help = row("RL.TOP|HELP");
    assert_eq!((help[1].as_str(), sorted(&help[2]).as_str()), ("2", "loading module stale"));

    // COMMAND DOCS: the container, then each subcommand's own docs.
    let Value::Array(pair) = query(&mut con, "COMMAND DOCS RL.TOP") else { panic!() };
    let docs = without_display_text(&pair[1]);
    let fields = pairs(&docs);
    let field = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
    let since = "0.2.0";
    assert_eq!(
        text(field("summary").unwrap()),
        "Who is limited on this node: the keys with the most denied calls or consumed units"
    );
    assert_eq!(text(field("complexity").unwrap()), "Depends on subcommand.");
    assert!(field("arguments").is_none());
    let mut subs: Vec<(String, String)> =
        pairs(field("subcommands").expect("subcommands")).into_iter().map(|(k, v)| (k, text(v))).collect();
    subs.sort();
    let head = |summary: &str, complexity: &str| {
        format!("summary {summary} since {since} group module complexity {complexity} module rl")
    };
    let count =
        "[name count type integer token COUNT summary how many keys, 1 to top-capacity (default 10) flags [optional]]";
    let want = [
        (
            "RL.TOP|CONSUMED",
            format!(
                "[{} arguments [{count}]]",
                head(
                    "The node's keys with the most consumed units since the last reset (sampled), highest first, \
                     with their error",
                    "O(C log C) where C is top-capacity"
                )
            ),
        ),
        (
            "RL.TOP|DENIED",
            format!(
                "[{} arguments [{count}]]",
                head(
                    "The node's keys with the most denied calls since the last reset, highest first, with their error",
                    "O(C log C) where C is top-capacity"
                )
            ),
        ),
        ("RL.TOP|HELP", format!("[{}]", head("Shows RL.TOP's subcommands", "O(1)"))),
        (
            "RL.TOP|RESET",
            format!("[{}]", head("Empties both RL.TOP lists of this node", "O(C) where C is top-capacity")),
        ),
    ];
    let want: Vec<(String, String)> = want.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    assert_eq!(subs, want);
}
