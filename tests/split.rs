//! Which half of the suite each `tests/*.rs` runs in follows from the tree:
//! a file that includes the server harness (`mod common;`) needs a server and
//! is a `[[test]]` in `Cargo.toml` that requires the `server-tests` feature
//! (the integration suite, run once per server); every other file needs no
//! server and runs once, in the unit half. This test (in the unit half)
//! fails when the two disagree, either way; the harness itself refuses to
//! build in a target without the feature.

use std::collections::BTreeSet;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The names of the `[[test]]` targets in `Cargo.toml` that require the
/// `server-tests` feature. A small reader of the one form the file uses:
/// `[[test]]`, then `name = "..."` and `required-features = [...]` lines.
fn declared_server_tests() -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let mut out = BTreeSet::new();
    let mut in_test = false;
    let mut name: Option<String> = None;
    let mut server = false;
    let mut flush = |name: &mut Option<String>, server: &mut bool| {
        if *server {
            out.insert(name.take().expect("a [[test]] that requires server-tests has no name"));
        }
        *name = None;
        *server = false;
    };
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            if in_test {
                flush(&mut name, &mut server);
            }
            in_test = line == "[[test]]";
            continue;
        }
        if !in_test {
            continue;
        }
        if let Some(v) = line.strip_prefix("name") {
            let v = v.trim_start().strip_prefix('=').expect("name = \"...\"").trim();
            name = Some(v.trim_matches('"').to_string());
        } else if line.starts_with("required-features") {
            server = line.contains("\"server-tests\"");
        }
    }
    if in_test {
        flush(&mut name, &mut server);
    }
    out
}

/// Whether a test file includes the harness: a line `mod common;`.
fn includes_harness(src: &str) -> bool {
    src.lines().any(|l| l.trim() == "mod common;")
}

#[test]
fn the_files_that_need_a_server_are_exactly_the_integration_suite() {
    let declared = declared_server_tests();
    let mut harness = BTreeSet::new();
    let mut unit = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("tests")).expect("tests/") {
        let path = entry.expect("tests/ entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let name = path.file_stem().and_then(|s| s.to_str()).expect("a file name").to_string();
        let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if includes_harness(&src) {
            harness.insert(name);
        } else {
            // Needs no server: it must not start one by other means either
            // (this file names those means, so it is not read for them).
            for what in
                ["redis-server", "REDIS_SERVER", "valkey-server", "--loadmodule"].iter().filter(|_| name != "split")
            {
                assert!(
                    !src.contains(what),
                    "tests/{name}.rs mentions {what:?} but does not use the harness (`mod common;`): \
                     a test that needs a server must use tests/common and be a [[test]] requiring \
                     server-tests in Cargo.toml"
                );
            }
            unit.insert(name);
        }
    }
    let undeclared: Vec<_> = harness.difference(&declared).collect();
    assert!(
        undeclared.is_empty(),
        "these tests include the server harness but are not declared in Cargo.toml as [[test]] with \
         required-features = [\"server-tests\"], so they would run in the unit half: {undeclared:?}"
    );
    let stray: Vec<_> = declared.difference(&harness).collect();
    assert!(
        stray.is_empty(),
        "these [[test]] entries require server-tests (so run once per server) but their file does not \
         use the harness (`mod common;`) or does not exist: {stray:?}"
    );
    // Both halves hold something: a reader that found nothing proves nothing.
    assert!(declared.len() >= 20, "only {declared:?} found in Cargo.toml");
    assert!(unit.contains("split") && unit.contains("core_properties"), "unit half: {unit:?}");
}
