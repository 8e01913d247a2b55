//! Real-text differential test: the jieba `dict.txt` key set (PyPI jieba 0.42.1,
//! subsampled to every 7th word, about 50k keys, to keep the debug run short) over the
//! first 51,791 chars of 西游记 (`tests/data/corpora/xiyouji-head.txt`), matched by this crate
//! (daachorse) and by pyahocorasick 2.3.1's `Automaton.iter_long` (leftmost-longest,
//! inclusive end index) run through `python3`, on the same folded text and folded
//! keys. Keys are restricted to those whose fold is all CJK, which need no word
//! boundaries (pyahocorasick has none).
//!
//! pyahocorasick 2.3.1's `iter_long` is known to drop a match reached through a failure
//! link after a longer partial match fails (WojciechMula/pyahocorasick issues #133,
//! #185, #189; fix in open PR #224): in `三十六般` with keys `六` and `三十六万镑` it
//! skips `六`. So the test walks both hit lists; wherever they disagree, the window
//! between the last common hit and the next common hit is re-scanned with a naive
//! leftmost-longest scanner (every prefix looked up in the sorted pattern list), which
//! must equal our hits there. Disagreement windows must stay rare (< 0.5% of hits).
//!
//! Overrides: `LOREBANK_JIEBA_DICT` (path to dict.txt), `LOREBANK_PYTHON` (interpreter).
// Tests read the corpus slices and tool paths; the library itself does no I/O.
#![allow(clippy::disallowed_methods)]

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{profile, read_corpus, SETUP};
use matcher::{Flavour, MatcherBuilder};

const SUBSAMPLE_EVERY: usize = 7;

fn python() -> String {
    std::env::var("LOREBANK_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

fn jieba_dict() -> PathBuf {
    if let Ok(path) = std::env::var("LOREBANK_JIEBA_DICT") {
        return PathBuf::from(path);
    }
    let output = Command::new(python())
        .args(["-c", "import jieba,os;print(os.path.dirname(jieba.__file__))"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}); run {SETUP}"));
    assert!(
        output.status.success(),
        "python3 cannot import jieba: {}; run {SETUP}",
        String::from_utf8_lossy(&output.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()).join("dict.txt")
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF)
}

const PY_SCRIPT: &str = r#"
import sys, ahocorasick
keys_path, text_path = sys.argv[1], sys.argv[2]
keys = open(keys_path, encoding="utf-8").read().split("\n")
text = open(text_path, encoding="utf-8").read()
a = ahocorasick.Automaton()
for idx, key in enumerate(keys):
    a.add_word(key, idx)
a.make_automaton()
out = sys.stdout
for end, idx in a.iter_long(text):
    out.write("%d %d %d\n" % (end - len(keys[idx]) + 1, end + 1, idx))
"#;

#[test]
fn jieba_keys_over_xiyouji_match_pyahocorasick() {
    let zh = profile(Flavour::Zh);
    let dict_path = jieba_dict();
    let dict = std::fs::read_to_string(&dict_path)
        .unwrap_or_else(|e| panic!("reading {}: {e}; run {SETUP}", dict_path.display()));
    let words: Vec<&str> = dict
        .lines()
        .filter_map(|line| line.split(' ').next())
        .step_by(SUBSAMPLE_EVERY)
        .filter(|w| {
            let folded = zh.fold(w);
            !folded.is_empty() && folded.chars().all(is_cjk)
        })
        .collect();
    assert!(words.len() > 40_000, "only {} jieba keys", words.len());
    let matcher = MatcherBuilder::new(zh).build(words.iter().enumerate().map(|(i, w)| (*w, i as u32))).expect("build");

    let text = read_corpus("xiyouji-head.txt");
    let normalized = zh.normalize(&text).expect("normalize");
    let norm = normalized.as_str();
    let hits = matcher.find(&normalized);
    // pyahocorasick over the unfolded slice and unfolded keys finds 8,626.
    assert!(hits.len() > 7_500, "only {} hits", hits.len());

    // Rust hits in folded-text char offsets.
    let mut char_of_byte = vec![0u32; norm.len() + 1];
    let mut n_chars = 0u32;
    for (byte, c) in norm.char_indices() {
        char_of_byte[byte] = n_chars;
        n_chars += 1;
        let _ = c;
    }
    char_of_byte[norm.len()] = n_chars;
    let ours: Vec<(u32, u32, u32)> = hits
        .iter()
        .map(|h| (char_of_byte[h.norm.start.as_usize()], char_of_byte[h.norm.end.as_usize()], h.pattern.as_u32()))
        .collect();

    // pyahocorasick over the same folded text and folded patterns.
    let dir = std::env::temp_dir().join(format!("lorebank-matcher-jieba-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let keys_path = dir.join("keys.txt");
    let text_path = dir.join("text.txt");
    let patterns: Vec<&str> = matcher.pattern_ids().map(|id| matcher.pattern(id)).collect();
    std::fs::write(&keys_path, patterns.join("\n")).expect("write keys");
    std::fs::write(&text_path, norm).expect("write text");
    let output = Command::new(python())
        .args(["-c", PY_SCRIPT])
        .arg(&keys_path)
        .arg(&text_path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}); run {SETUP}"));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        output.status.success(),
        "pyahocorasick run failed: {}; run {SETUP}",
        String::from_utf8_lossy(&output.stderr)
    );
    let theirs: Vec<(u32, u32, u32)> = String::from_utf8(output.stdout)
        .expect("utf-8")
        .lines()
        .map(|line| {
            let mut fields = line.split(' ').map(|f| f.parse::<u32>().expect("number"));
            (fields.next().unwrap(), fields.next().unwrap(), fields.next().unwrap())
        })
        .collect();
    // Walk both lists; re-check every disagreement window with the naive scanner.
    let char_starts: Vec<usize> = norm.char_indices().map(|(b, _)| b).chain([norm.len()]).collect();
    let max_chars = patterns.iter().map(|p| p.chars().count()).max().unwrap_or(1);
    let naive_from = |from_char: u32, until_char: u32| -> Vec<(u32, u32, u32)> {
        let mut out = Vec::new();
        let mut pos = from_char as usize;
        while pos < until_char as usize {
            let longest = (1..=max_chars).rev().find_map(|len| {
                let end = pos + len;
                if end >= char_starts.len() {
                    return None;
                }
                let candidate = &norm[char_starts[pos]..char_starts[end]];
                patterns.binary_search(&candidate).ok().map(|idx| (end, idx))
            });
            match longest {
                Some((end, idx)) => {
                    out.push((pos as u32, end as u32, idx as u32));
                    pos = end;
                }
                None => pos += 1,
            }
        }
        out
    };
    let (mut i, mut j) = (0usize, 0usize);
    let mut last_common_end = 0u32;
    let mut n_windows = 0usize;
    while i < ours.len() || j < theirs.len() {
        if i < ours.len() && j < theirs.len() && ours[i] == theirs[j] {
            last_common_end = ours[i].1;
            i += 1;
            j += 1;
            continue;
        }
        // Find the next hit both lists share.
        let (mut i2, mut j2) = (i, j);
        while i2 < ours.len() && j2 < theirs.len() && ours[i2] != theirs[j2] {
            if ours[i2].0 <= theirs[j2].0 {
                i2 += 1;
            } else {
                j2 += 1;
            }
        }
        let window_end = if i2 < ours.len() && j2 < theirs.len() { ours[i2].0 } else { n_chars };
        let truth = naive_from(last_common_end, window_end);
        assert_eq!(
            &ours[i..i2],
            &truth[..],
            "our hits differ from the naive scan in chars {last_common_end}..{window_end} (pyahocorasick: {:?})",
            &theirs[j..j2]
        );
        n_windows += 1;
        i = i2;
        j = j2;
    }
    eprintln!(
        "{} hits; {n_windows} windows where pyahocorasick iter_long disagreed (naive agrees with us)",
        ours.len()
    );
    assert!(n_windows * 200 < ours.len(), "{n_windows} disagreement windows in {} hits", ours.len());
}
