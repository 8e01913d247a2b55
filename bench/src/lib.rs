//! What the benchmarks share: the committed corpus slices and jieba's word list.

use std::path::{Path, PathBuf};

/// A committed corpus slice (`tests/data/corpora/NAME`).
pub fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/corpora").join(name)
}

/// `limit` distinct Chinese words of two or more characters from jieba's `dict.txt`
/// (installed by `scripts/setup.sh`), spread over the dictionary.
pub fn jieba_words(limit: usize) -> Vec<String> {
    let output = std::process::Command::new("python3")
        .args(["-c", "import jieba, os; print(os.path.dirname(jieba.__file__))"])
        .output()
        .expect("python3 with jieba (run scripts/setup.sh)");
    let dir = String::from_utf8(output.stdout).expect("a UTF-8 path").trim().to_owned();
    let dict = std::fs::read_to_string(Path::new(&dir).join("dict.txt")).expect("jieba dict.txt");
    let mut words: Vec<String> = dict
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|word| word.chars().count() >= 2 && word.chars().all(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)))
        .map(str::to_owned)
        .collect();
    words.sort();
    words.dedup();
    // Spread over the dictionary, not its first letters.
    let step = (words.len() / limit).max(1);
    words.into_iter().step_by(step).take(limit).collect()
}
