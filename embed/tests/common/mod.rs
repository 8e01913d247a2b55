//! What the embed tests share: the committed tiny model and the builder of its
//! tokenizer.
//!
//! Each test file uses a part of this module.
#![allow(dead_code)]

use std::path::PathBuf;

use embed::{EmbedOptions, Embedder, Pooling};
use tokenizers::models::wordlevel::WordLevel;
use tokenizers::normalizers::unicode::NFKC;
use tokenizers::normalizers::utils::{Lowercase, Sequence as NormalizerSequence};
use tokenizers::pre_tokenizers::sequence::Sequence as PreTokenizerSequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::pre_tokenizers::whitespace::WhitespaceSplit;
use tokenizers::{SplitDelimiterBehavior, Tokenizer};

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
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata").join(name)
}

/// The tiny tokenizer: NFKC and lowercase, split on whitespace, then one token per
/// character, looked up in a word-level vocabulary (`[UNK]` for the rest).
pub fn tiny_tokenizer() -> Tokenizer {
    let mut vocab: Vec<(String, u32)> = vec![("[PAD]".to_owned(), 0), ("[UNK]".to_owned(), 1)];
    for c in VOCAB_CHARS.iter().flat_map(|chars| chars.chars()) {
        let token = c.to_string();
        if !vocab.iter().any(|(known, _)| *known == token) {
            let id = vocab.len() as u32;
            vocab.push((token, id));
        }
    }
    let model = WordLevel::builder().vocab(vocab.into_iter().collect()).unk_token("[UNK]".to_owned()).build().unwrap();
    let mut tokenizer = Tokenizer::new(model);
    tokenizer.with_normalizer(Some(NormalizerSequence::new(vec![NFKC.into(), Lowercase.into()])));
    let chars = Split::new(SplitPattern::Regex(".".to_owned()), SplitDelimiterBehavior::Isolated, false).unwrap();
    tokenizer.with_pre_tokenizer(Some(PreTokenizerSequence::new(vec![WhitespaceSplit.into(), chars.into()])));
    tokenizer
}

/// The bytes of `tiny-tokenizer.json`: [`tiny_tokenizer`], pretty JSON, one newline.
pub fn tiny_tokenizer_json() -> String {
    let mut json = tiny_tokenizer().to_string(true).unwrap();
    json.push('\n');
    json
}

/// Options of the tiny model's token-level output, mean-pooled and normalized.
pub fn tiny_options() -> EmbedOptions {
    EmbedOptions::new("lorebank-tiny-char-mean-32", Pooling::Mean, true).output("last_hidden_state")
}

/// The tiny model with its tokenizer and [`tiny_options`].
pub fn load_tiny() -> Embedder {
    match Embedder::load(&testdata("tiny.onnx"), Some(&testdata("tiny-tokenizer.json")), tiny_options()) {
        Ok(embedder) => embedder,
        Err(error) => panic!("{error}"),
    }
}

/// Cosine of two vectors, in f64.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

/// The oracle of the tiny model, from the formula `make_tiny_model.py` writes (not
/// from the graph): the id of each character of `text` (whitespace skipped,
/// lowercased, `[UNK]` for the rest).
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

/// Row `id` of the tiny model's table.
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

/// The largest difference between an f32 vector and an f64 one.
pub fn max_difference(a: &[f32], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (f64::from(*x) - y).abs()).fold(0.0, f64::max)
}
