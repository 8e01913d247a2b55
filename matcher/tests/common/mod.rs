//! Shared helpers for the integration tests: profiles by their names in the test
//! tables, the corpus slices in `tests/data/corpora/`, and the span properties every
//! hit must keep (profiles built once and the aho-corasick engine come from
//! `test_support`).
// Tests read the corpus slices and tool paths; the library itself does no I/O.
#![allow(clippy::disallowed_methods)]
#![allow(dead_code)]

use std::path::PathBuf;

use matcher::{Flavour, Hit, Matcher, NormalizedText, Profile};
#[allow(unused_imports)]
pub use test_support::matching::AhoCorasickEngine;
#[allow(unused_imports)]
pub use test_support::profiles::{nfkc_profile, profile};

/// The command that installs everything the tests need.
pub const SETUP: &str = "scripts/setup.sh (apt-get install -y libopencc-dev opencc unicode-data bzip2; pip install jieba==0.42.1 pyahocorasick==2.3.1)";

/// Profile by the name used in the test tables.
pub fn profile_named(name: &str) -> &'static Profile {
    match name {
        "zh" => profile(Flavour::Zh),
        "ja" => profile(Flavour::Ja),
        "plain" => profile(Flavour::Plain),
        "nfkc" => nfkc_profile(),
        other => panic!("unknown profile {other:?} (zh, ja, plain, nfkc)"),
    }
}

/// Path to a corpus slice in the repository (`tests/data/corpora/` from the workspace
/// root; its README gives the provenance and licence of each file).
pub fn corpus_path(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/corpora")).join(name)
}

pub fn read_corpus(name: &str) -> String {
    let path = corpus_path(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The properties every hit list must keep (panics with context otherwise).
pub fn check_hits(matcher: &Matcher, text: &NormalizedText<'_>, hits: &[Hit], context: &str) {
    let src = text.source();
    let profile = matcher.profile();
    let mut prev_end = 0usize;
    let mut prev_norm_end = 0usize;
    for hit in hits {
        let bytes = hit.src.bytes();
        assert!(bytes.start < bytes.end && bytes.end <= src.len(), "{context}: span {hit:?} out of range");
        assert!(
            src.is_char_boundary(bytes.start) && src.is_char_boundary(bytes.end),
            "{context}: span {hit:?} not on char boundaries"
        );
        assert!(bytes.start >= prev_end, "{context}: spans overlap or go backwards at {hit:?}");
        assert!(hit.norm.start.as_usize() >= prev_norm_end, "{context}: folded spans overlap at {hit:?}");
        prev_end = bytes.end;
        prev_norm_end = hit.norm.end.as_usize();
        assert_eq!(
            src[..bytes.start].chars().count(),
            hit.src.start_char.as_usize(),
            "{context}: char start of {hit:?}"
        );
        assert_eq!(src[bytes.clone()].chars().count(), hit.src.chars().len(), "{context}: char length of {hit:?}");
        let pattern = matcher.pattern(hit.pattern);
        assert_eq!(&text.as_str()[hit.norm.bytes()], pattern, "{context}: folded text under {hit:?}");
        // fold(original[span]) == fold(key), with hidden markup removed.
        let original = &src[bytes];
        let refolded = profile.normalize(original).expect("normalize span").as_str().to_string();
        assert_eq!(refolded, pattern, "{context}: fold({original:?}) != pattern for {hit:?}");
    }
}
