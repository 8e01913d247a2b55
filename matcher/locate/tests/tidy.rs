//! Tidy checks on the crate's own sources: every module starts with a `//!` header,
//! and `clippy.toml` bans the clock, `HashMap`/`HashSet`, `std::fs` and the
//! environment in the library, which is what keeps the index and the answers
//! deterministic.
// This test reads the crate's own files; the library itself does no I/O.
#![allow(clippy::disallowed_methods)]

#[test]
fn every_module_has_a_header() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut n_files = 0;
    for entry in std::fs::read_dir(dir).expect("src") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("read");
            assert!(text.starts_with("//!"), "{} has no //! header", path.display());
            n_files += 1;
        }
    }
    assert!(n_files >= 5, "only {n_files} modules");
}

#[test]
fn clippy_bans_nondeterminism() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/clippy.toml")).expect("clippy.toml");
    for banned in [
        "std::time::Instant::now",
        "std::time::SystemTime::now",
        "std::collections::HashMap",
        "std::collections::HashSet",
        "std::fs::read",
        "std::fs::write",
        "std::env::var",
    ] {
        assert!(text.contains(banned), "clippy.toml does not ban {banned}");
    }
}
