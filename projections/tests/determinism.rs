//! Two processes fold and freeze the same glossary and must print byte-identical
//! snapshot IDs, snapshot bytes and frozen projections (no hash map iteration, no
//! address, clock or randomness reaches them).
//!
//! A `harness = false` target: run by `cargo test`, `main` is the test and re-runs this
//! same binary twice with `LOREBANK_DETERMINISM_CHILD` set; a child only prints its
//! fingerprint.

mod support;

use projections::frozen::freeze;
use support::glossary;
use test_support::harness;
use test_support::profiles::zh_profile;

const CHILD: &str = "LOREBANK_DETERMINISM_CHILD";

fn fingerprint() -> String {
    let sim = glossary();
    let frozen = freeze(&sim.state, zh_profile()).unwrap();
    format!(
        "determinism {} {} {}",
        sim.state.snapshot_id(),
        blake3::hash(&sim.state.snapshot_bytes()).to_hex(),
        blake3::hash(&frozen).to_hex()
    )
}

fn two_processes_build_byte_identical_snapshots() {
    let exe = std::env::current_exe().unwrap();
    let run = || {
        let output = std::process::Command::new(&exe).env(CHILD, "1").output().unwrap();
        assert!(output.status.success(), "child failed: {}", String::from_utf8_lossy(&output.stderr));
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert!(stdout.starts_with("determinism "), "the child printed {stdout:?}");
        stdout.trim_end().to_owned()
    };
    let first = run();
    let second = run();
    assert_eq!(first, second);
    assert_eq!(first, fingerprint(), "this process disagrees with its children");
}

fn main() {
    if std::env::var_os(CHILD).is_some() {
        println!("{}", fingerprint());
        return;
    }
    harness::run(&[("two_processes_build_byte_identical_snapshots", two_processes_build_byte_identical_snapshots)]);
}
