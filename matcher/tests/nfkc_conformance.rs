//! NFKC conformance of the segment-wise fold: a profile built with
//! `ProfileBuilder::nfkc_only()` must map every column of Unicode's
//! NormalizationTest.txt to its NFKC column (c4 = NFKC(c1..c5)). The full zh/ja
//! profiles must be idempotent on every test string.
//!
//! Data: Debian `unicode-data` (`/usr/share/unicode/NormalizationTest.txt.bz2`, read
//! with `bzcat`), or `LOREBANK_NORMALIZATION_TEST` pointing at a plain or .bz2 copy.
// Tests read the corpus slices and tool paths; the library itself does no I/O.
#![allow(clippy::disallowed_methods)]

mod common;

use std::process::Command;

use common::{nfkc_profile, profile, SETUP};
use matcher::Flavour;

fn normalization_test() -> String {
    let path = std::env::var("LOREBANK_NORMALIZATION_TEST")
        .unwrap_or_else(|_| "/usr/share/unicode/NormalizationTest.txt.bz2".to_string());
    assert!(std::path::Path::new(&path).exists(), "missing {path} (Debian package unicode-data); run {SETUP}");
    if path.ends_with(".bz2") {
        let output =
            Command::new("bzcat").arg(&path).output().unwrap_or_else(|e| panic!("cannot run bzcat ({e}); run {SETUP}"));
        assert!(output.status.success(), "bzcat {path} failed; run {SETUP}");
        String::from_utf8(output.stdout).expect("utf-8")
    } else {
        std::fs::read_to_string(&path).expect("read NormalizationTest.txt")
    }
}

fn column(field: &str) -> String {
    field
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(|hex| char::from_u32(u32::from_str_radix(hex, 16).expect("hex")).expect("scalar"))
        .collect()
}

#[test]
fn nfkc_only_profile_passes_normalization_test() {
    let data = normalization_test();
    let nfkc = nfkc_profile();
    let zh = profile(Flavour::Zh);
    let ja = profile(Flavour::Ja);
    let mut n_lines = 0usize;
    let mut failures = Vec::new();
    for line in data.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() || line.starts_with('@') {
            continue;
        }
        let cols: Vec<String> = line.split(';').take(5).map(column).collect();
        assert_eq!(cols.len(), 5, "bad line {line}");
        n_lines += 1;
        for (idx, col) in cols.iter().enumerate() {
            let got = nfkc.fold(col);
            if got != cols[3] && failures.len() < 20 {
                failures.push(format!("line {line:?}: NFKC(c{}) = {got:?}, expected {:?}", idx + 1, cols[3]));
            }
            for profile in [zh, ja] {
                let once = profile.fold(col);
                assert_eq!(profile.fold(&once), once, "{:?} fold not idempotent on {col:?}", profile.flavour());
            }
        }
    }
    assert!(n_lines > 15_000, "only {n_lines} test lines");
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
