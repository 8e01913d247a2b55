//! Two processes fold and freeze the same glossary and must print byte-identical
//! snapshot IDs, snapshot bytes and frozen projections (no hash map iteration, no
//! address, clock or randomness reaches them).
//!
//! A `harness = false` target: run by `cargo test`, `main` is the test and re-runs this
//! same binary twice with `LOREBANK_DETERMINISM_CHILD` set; a child only prints its
//! fingerprint.

mod support;

use matcher::{Flavour, Profile, ProfileBuilder};
use projections::frozen::freeze;
use support::glossary;

const NAME: &str = "two_processes_build_byte_identical_snapshots";
const CHILD: &str = "LOREBANK_DETERMINISM_CHILD";

fn fingerprint() -> String {
    let profile: Profile = ProfileBuilder::new(Flavour::Zh).build().unwrap();
    let sim = glossary();
    let frozen = freeze(&sim.state, &profile).unwrap();
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
    run_one(NAME, two_processes_build_byte_identical_snapshots);
}

/// The part of libtest's interface `cargo test` relies on: name filters, `--exact`,
/// `--list`, and a `test result:` line that totals count.
fn run_one(name: &str, test: fn()) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|arg| arg == "--list") {
        println!("{name}: test");
        return;
    }
    let exact = args.iter().any(|arg| arg == "--exact");
    let mut filters = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--skip" | "--test-threads" | "--format" | "--color" | "--logfile" => {
                args.next();
            }
            flag if flag.starts_with('-') => {}
            filter => filters.push(filter),
        }
    }
    let selected = filters.is_empty() || filters.iter().any(|f| if exact { *f == name } else { name.contains(*f) });
    if !selected {
        println!("test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 1 filtered out");
        return;
    }
    println!("running 1 test");
    test();
    println!("test {name} ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out");
}
