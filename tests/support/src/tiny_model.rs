//! The tiny embedding model `embed/testdata/` commits, and its oracle: vectors
//! computed from the formula the model was written from (`make_tiny_model.py`), not
//! from its graph, so a test of `embed` or of `suggest` checks what a model run gives
//! against an independent answer.

use std::path::{Path, PathBuf};

/// The characters of the tiny vocabulary, in id order after `[PAD]` (0) and `[UNK]`
/// (1): Han, kana, Cyrillic, Latin letters and digits. A repeated character keeps its
/// first id.
pub const VOCAB_CHARS: [&str; 4] = [
    "雾川灯录萧炎薰儿药老林动山水火风云天地人心月日星光明夜雨雪花草木石金玉龙凤虎马鸟鱼城门家国王子女父母兄弟师徒剑刀书画琴棋酒茶白黑红青长短大小上下左右东西南北春夏秋冬一二三四五六七八九十百千万年时",
    "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん",
    "абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
    "abcdefghijklmnopqrstuvwxyz0123456789",
];

/// A file of `embed/testdata/`.
pub fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../embed/testdata").join(name)
}

/// The id of each character of `text` (whitespace skipped, lowercased, `[UNK]` for the
/// rest).
pub fn oracle_ids(text: &str) -> Vec<u32> {
    let mut chars: Vec<char> = Vec::new();
    for c in VOCAB_CHARS.iter().flat_map(|chars| chars.chars()) {
        if !chars.contains(&c) {
            chars.push(c);
        }
    }
    text.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .map(|c| chars.iter().position(|known| *known == c).map_or(1, |position| position as u32 + 2))
        .collect()
}

fn splitmix64(x: u64) -> u64 {
    let mut x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Row `id` of the tiny model's table: `(splitmix64(id * 32 + component) mod 2049 -
/// 1024) / 1024`, and zeros for `[PAD]`.
pub fn oracle_row(id: u32) -> Vec<f64> {
    (0..32u64)
        .map(
            |component| {
                if id == 0 {
                    0.0
                } else {
                    ((splitmix64(u64::from(id) * 32 + component) % 2049) as f64 - 1024.0) / 1024.0
                }
            },
        )
        .collect()
}

/// The mean of the rows of `text`'s characters, in f64, normalized when asked.
pub fn oracle_vector(text: &str, normalize: bool) -> Vec<f64> {
    let ids = oracle_ids(text);
    let mut mean = vec![0f64; 32];
    for id in &ids {
        for (sum, value) in mean.iter_mut().zip(oracle_row(*id)) {
            *sum += value;
        }
    }
    for component in &mut mean {
        *component /= ids.len() as f64;
    }
    if normalize {
        let norm = mean.iter().map(|x| x * x).sum::<f64>().sqrt();
        for component in &mut mean {
            *component /= norm;
        }
    }
    mean
}

/// The oracle's cosine of two texts, in millionths (as `embed::Score` counts).
pub fn oracle_score(a: &str, b: &str) -> i64 {
    let (x, y) = (oracle_vector(a, false), oracle_vector(b, false));
    let dot: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
    let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
    (dot / (norm(&x) * norm(&y)) * 1e6).round() as i64
}
