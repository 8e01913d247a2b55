//! Table-driven matching tests: every case in `tests/testdata/*.toml` runs against
//! daachorse, aho-corasick (leftmost-longest), the naive scanner, and a frozen-and-
//! loaded copy of the matcher; all must produce exactly the expected hits, and every
//! hit must keep the span contract. A test also asserts case names are unique.
// Tests read the corpus slices and tool paths; the library itself does no I/O.
#![allow(clippy::disallowed_methods)]

mod common;

use std::collections::BTreeSet;

use common::{check_hits, profile_named, AhoCorasickEngine};
use matcher::{Hit, Matcher, MatcherBuilder};
use serde::Deserialize;

#[derive(Deserialize)]
struct File {
    test: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    profile: String,
    patterns: Vec<String>,
    haystack: String,
    #[serde(default = "yes")]
    word_boundaries: bool,
    matches: Vec<[usize; 3]>,
}

fn yes() -> bool {
    true
}

fn load_cases() -> Vec<(String, Case)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/testdata");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/testdata")
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "expected the basics, fold and markup tables in {dir}");
    let mut cases = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read table");
        let file: File = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file_name = path.file_name().unwrap().to_string_lossy().to_string();
        cases.extend(file.test.into_iter().map(|case| (file_name.clone(), case)));
    }
    cases
}

fn as_triples(matcher: &Matcher, hits: &[Hit]) -> Vec<[usize; 3]> {
    hits.iter()
        .map(|hit| {
            [matcher.values(hit.pattern)[0] as usize, hit.src.start_char.as_usize(), hit.src.end_char.as_usize()]
        })
        .collect()
}

#[test]
fn case_names_are_unique() {
    let cases = load_cases();
    let mut seen = BTreeSet::new();
    for (file, case) in &cases {
        assert!(seen.insert(case.name.clone()), "duplicate case name {:?} in {file}", case.name);
    }
    assert!(cases.len() >= 30, "only {} cases found", cases.len());
}

#[test]
fn every_engine_matches_every_case() {
    let mut failures = Vec::new();
    for (file, case) in load_cases() {
        let profile = profile_named(&case.profile);
        let keys = case.patterns.iter().enumerate().map(|(i, p)| (p.as_str(), i as u32));
        let matcher = MatcherBuilder::new(profile)
            .word_boundaries(case.word_boundaries)
            .build(keys)
            .unwrap_or_else(|e| panic!("{file}/{}: build: {e}", case.name));
        let frozen = Matcher::from_bytes(&matcher.to_bytes(), profile)
            .unwrap_or_else(|e| panic!("{file}/{}: load: {e}", case.name));
        let text = profile.normalize(&case.haystack).expect("normalize");
        let aho = AhoCorasickEngine::new(&matcher);
        let runs = [
            ("daachorse", matcher.find(&text)),
            ("aho-corasick", matcher.find_with(&aho, &text)),
            ("naive", matcher.find_naive(&text)),
            ("daachorse-frozen", frozen.find(&text)),
        ];
        for (engine, hits) in runs {
            let got = as_triples(&matcher, &hits);
            if got != case.matches {
                failures.push(format!(
                    "{file}/{} [{engine}, profile {}]: expected {:?}, got {:?} (folded text {:?})",
                    case.name,
                    case.profile,
                    case.matches,
                    got,
                    text.as_str()
                ));
            }
            check_hits(&matcher, &text, &hits, &format!("{file}/{} [{engine}]", case.name));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
