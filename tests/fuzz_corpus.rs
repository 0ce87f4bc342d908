//! The fuzzers' corpus (fuzz/corpus/, seeded from real DUMPs, AOF files and
//! argvs by scripts/fuzz-seeds.py) and their minimized findings
//! (fuzz/regressions/) replayed through the same entry points the fuzzers
//! call (`redis_rl::fuzzing`, feature `fuzzing`), without a fuzzer: a
//! regression test of every finding, and a check that the seeds still reach
//! the code they are meant to (a real DUMP loads, a real AOF's payloads
//! apply, a valid argv parses).
//!
//!     cargo test --features fuzzing --test fuzz_corpus
//!
//! (scripts/fuzz.sh runs it first.) Without the feature there is nothing
//! to call, and the file is empty: `--test fuzz_corpus` still builds, as
//! scripts/test.sh names every harness-free test file.
#![cfg(feature = "fuzzing")]

use std::fs;
use std::path::{Path, PathBuf};

fn files(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join(dir);
    let mut out: Vec<PathBuf> = fs::read_dir(&root)
        .map(|d| d.map(|e| e.expect("a directory entry").path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn every_real_dump_loads_saves_and_reloads_the_same_words() {
    let seeds = files("corpus/rdb");
    assert!(seeds.len() >= 9, "a DUMP of every kind (two booked) and the aux field: {seeds:?}");
    for f in seeds {
        assert!(redis_rl::fuzzing::rdb(&fs::read(&f).unwrap()), "{} does not load", f.display());
    }
}

#[test]
fn every_payload_of_a_real_aof_applies() {
    let seeds = files("corpus/apply");
    // One per kind, and GCRA and token-bucket states with bookings (MAXWAIT).
    assert_eq!(seeds.len(), 8, "one AOF's payloads per kind, and the booked ones: {seeds:?}");
    let booked = |f: &std::path::PathBuf| f.file_name().is_some_and(|n| n.to_string_lossy().ends_with("booked"));
    assert_eq!(seeds.iter().filter(|f| booked(f)).count(), 2, "{seeds:?}");
    for f in seeds {
        let data = fs::read(&f).unwrap();
        let mut records = 0;
        let mut rest = &data[..];
        while let [a, b, tail @ ..] = rest {
            let len = usize::from(u16::from_le_bytes([*a, *b]));
            rest = &tail[len..];
            records += 1;
        }
        assert_eq!(redis_rl::fuzzing::apply(&data), records, "{}: a payload refused", f.display());
    }
}

#[test]
fn every_seed_argv_parses() {
    let seeds = files("corpus/args");
    assert!(seeds.len() >= 14, "{seeds:?}");
    for f in seeds {
        assert!(redis_rl::fuzzing::args(&fs::read(&f).unwrap()), "{} is refused", f.display());
    }
}

#[test]
fn the_model_seeds_make_calls() {
    for f in files("corpus/model") {
        assert!(redis_rl::fuzzing::model(&fs::read(&f).unwrap()) > 10, "{}", f.display());
    }
}

/// Each file under fuzz/regressions/<target>/ is an input a fuzzer once
/// failed on, minimized: it must now pass its target's checks.
#[test]
fn every_minimized_finding_passes() {
    for target in ["args", "rdb", "apply", "model"] {
        for f in files(&format!("regressions/{target}")) {
            let data = fs::read(&f).unwrap();
            match target {
                "args" => drop(redis_rl::fuzzing::args(&data)),
                "rdb" => drop(redis_rl::fuzzing::rdb(&data)),
                "apply" => drop(redis_rl::fuzzing::apply(&data)),
                _ => drop(redis_rl::fuzzing::model(&data)),
            }
        }
    }
}
