//! Shared helpers for the integration tests: profiles built once per test binary, the
//! corpus slices in `tests/data/corpora/`, an aho-corasick engine, and the span
//! properties every hit must keep.
// Tests read the corpus slices and tool paths; the library itself does no I/O.
#![allow(clippy::disallowed_methods)]
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

use matcher::{Flavour, Hit, LeftmostLongest, Matcher, NormalizedText, PatternId, Profile, ProfileBuilder};

/// The command that installs everything the tests need.
pub const SETUP: &str = "scripts/setup.sh (apt-get install -y libopencc-dev opencc unicode-data bzip2; pip install jieba==0.42.1 pyahocorasick==2.3.1)";

pub fn profile(flavour: Flavour) -> &'static Profile {
    static ZH: OnceLock<Profile> = OnceLock::new();
    static JA: OnceLock<Profile> = OnceLock::new();
    static PLAIN: OnceLock<Profile> = OnceLock::new();
    let cell = match flavour {
        Flavour::Zh => &ZH,
        Flavour::Ja => &JA,
        _ => &PLAIN,
    };
    cell.get_or_init(|| {
        ProfileBuilder::new(flavour)
            .build()
            .unwrap_or_else(|e| panic!("building the {flavour:?} profile failed: {e}; run {SETUP}"))
    })
}

pub fn nfkc_profile() -> &'static Profile {
    static NFKC: OnceLock<Profile> = OnceLock::new();
    NFKC.get_or_init(|| ProfileBuilder::nfkc_only().build().expect("nfkc profile"))
}

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

/// aho-corasick with leftmost-longest semantics over a matcher's patterns.
pub struct AhoCorasickEngine(aho_corasick::AhoCorasick);

impl AhoCorasickEngine {
    pub fn new(matcher: &Matcher) -> AhoCorasickEngine {
        let patterns: Vec<&str> = matcher.pattern_ids().map(|id| matcher.pattern(id)).collect();
        AhoCorasickEngine(
            aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                .build(patterns)
                .expect("aho-corasick build"),
        )
    }
}

impl LeftmostLongest for AhoCorasickEngine {
    fn find_from(&self, haystack: &str, from: usize) -> Option<(PatternId, usize, usize)> {
        let input = aho_corasick::Input::new(haystack).span(from..haystack.len());
        let m = self.0.find(input)?;
        Some((PatternId::new(m.pattern().as_u32()), m.start(), m.end()))
    }
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
