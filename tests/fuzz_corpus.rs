//! Every fuzz target's body runs over its committed seed corpus (`fuzz/corpus/<target>/`)
//! as an ordinary test, so `cargo test` exercises the fuzz logic without libFuzzer, and
//! a seed that once broke a property stays a regression test. The bodies are compiled
//! from `fuzz/src/lib.rs`, the same file the targets use.

#[path = "../fuzz/src/lib.rs"]
mod bodies;

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The seeds of `target`, by file name; at least one, each at most 4 KiB.
fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = fuzz_dir().join("corpus").join(target);
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "{target} has no seeds");
    for (name, bytes) in &seeds {
        assert!(bytes.len() <= 4096, "{target}/{name} is {} bytes; seeds stay small", bytes.len());
    }
    seeds
}

fn run(target: &str, body: fn(&[u8])) {
    for (name, bytes) in corpus(target) {
        eprintln!("{target}/{name}");
        body(&bytes);
    }
}

#[test]
fn every_fuzz_target_has_a_body_test_and_a_seed_corpus() {
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).unwrap();
    let targets: Vec<&str> = manifest
        .lines()
        .filter_map(|line| line.strip_prefix("name = \"fuzz_"))
        .map(|rest| rest.trim_end_matches('"'))
        .collect();
    let tested = [
        "event_codec",
        "enamdict",
        "normalize",
        "matcher",
        "frozen_load",
        "receipt_and_apply",
        "frozen_projection",
        "import",
        "loop_checks",
        "archive",
        "replica",
        "derived",
        "batch",
        "locate",
        "model_answers",
    ];

    assert_eq!(targets, tested, "a fuzz target without a corpus test below, or a test of no target");
    for target in targets {
        corpus(&format!("fuzz_{target}"));
    }
}

#[test]
fn fuzz_event_codec_seeds() {
    run("fuzz_event_codec", bodies::event_codec);
}

#[test]
fn fuzz_enamdict_seeds() {
    run("fuzz_enamdict", bodies::enamdict);
}

#[test]
fn fuzz_normalize_seeds() {
    run("fuzz_normalize", bodies::normalize);
}

#[test]
fn fuzz_matcher_seeds() {
    run("fuzz_matcher", bodies::matcher);
}

#[test]
fn fuzz_frozen_load_seeds() {
    run("fuzz_frozen_load", bodies::frozen_load);
}

#[test]
fn fuzz_receipt_and_apply_seeds() {
    run("fuzz_receipt_and_apply", bodies::receipt_and_apply);
}

#[test]
fn fuzz_frozen_projection_seeds() {
    run("fuzz_frozen_projection", bodies::frozen_projection);
}

#[test]
fn fuzz_import_seeds() {
    run("fuzz_import", bodies::import);
}

#[test]
fn fuzz_loop_checks_seeds() {
    run("fuzz_loop_checks", bodies::loop_checks);
}

#[test]
fn fuzz_archive_seeds() {
    run("fuzz_archive", bodies::archive);
}

#[test]
fn fuzz_replica_seeds() {
    run("fuzz_replica", bodies::replica);
}

#[test]
fn fuzz_derived_seeds() {
    run("fuzz_derived", bodies::derived);
}

#[test]
fn fuzz_batch_seeds() {
    run("fuzz_batch", bodies::batch);
}

#[test]
fn fuzz_locate_seeds() {
    run("fuzz_locate", bodies::locate);
}

#[test]
fn fuzz_model_answers_seeds() {
    run("fuzz_model_answers", bodies::model_answers);
}
