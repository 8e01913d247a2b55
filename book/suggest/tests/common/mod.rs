//! What the suggest tests share: the embed crate's committed tiny model, an oracle of
//! its vectors computed from the formula it was written from (not from the graph), and
//! small Chinese books.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use book::{Book, Labelled, WriteOptions};
use ledger::Ledger;
use ledger_model::*;
use matcher::{Flavour, ProfileBuilder};
use suggest::{ModelFiles, ModelOptions};

/// A file of `embed/testdata/`.
pub fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../embed/testdata").join(name)
}

/// The tiny model and its tokenizer.
pub fn tiny() -> ModelFiles {
    ModelFiles {
        model: testdata("tiny.onnx"),
        tokenizer: Some(testdata("tiny-tokenizer.json")),
        ..ModelFiles::default()
    }
}

/// How the tiny model is read: its token-level output, mean-pooled, normalized.
pub fn tiny_options() -> ModelOptions {
    ModelOptions {
        output: Some("last_hidden_state".into()),
        ..ModelOptions::new("lorebank-tiny-char-mean-32", EmbeddingPooling::Mean, true)
    }
}

pub fn write() -> WriteOptions {
    WriteOptions { actor: "tool:embed".into(), source: None, expect_head: None, recorded_at_ms: 0 }
}

pub fn id(text: &str) -> RecordId {
    text.parse().unwrap()
}

fn zh_table() -> &'static (Hash32, Vec<u8>) {
    static TABLE: OnceLock<(Hash32, Vec<u8>)> = OnceLock::new();
    TABLE.get_or_init(|| {
        let profile = ProfileBuilder::new(Flavour::Zh).build().unwrap();
        (Hash32(profile.id().0), profile.to_bytes())
    })
}

/// A new zh book at `path` holding `bodies` after its config.
pub fn zh_book(path: &Path, bodies: Vec<Body>) -> Book {
    let (table, bytes) = zh_table().clone();
    let mut book = Book::new(Ledger::create(path).unwrap());
    let config = Body::ConfigSet(ConfigSet {
        assembly: AssemblyConfig::default(),
        profile: ProfileRef { name: "zh".into(), table: Some(table) },
    });
    let mut all = vec![config];
    all.extend(bodies);
    book.submit_labelled(&write(), Labelled::numbered(all, "test"), vec![(table, bytes)]).unwrap();
    book
}

pub fn term(id_text: &str, src: &str, dst: &str) -> Body {
    Body::TermPut(TermPut { kind: Some("character".into()), ..TermPut::new(id(id_text), src, dst) })
}

/// The characters of the tiny vocabulary in id order after `[PAD]` and `[UNK]`
/// (`embed/testdata/README.md`).
pub const VOCAB_CHARS: [&str; 4] = [
    "雾川灯录萧炎薰儿药老林动山水火风云天地人心月日星光明夜雨雪花草木石金玉龙凤虎马鸟鱼城门家国王子女父母兄弟师徒剑刀书画琴棋酒茶白黑红青长短大小上下左右东西南北春夏秋冬一二三四五六七八九十百千万年时",
    "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん",
    "абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
    "abcdefghijklmnopqrstuvwxyz0123456789",
];

fn oracle_ids(text: &str) -> Vec<u32> {
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

/// The tiny model's vector of `text` from its formula: the mean of the table rows
/// `(splitmix64(id * 32 + component) mod 2049 - 1024) / 1024` of its characters.
pub fn oracle_vector(text: &str) -> Vec<f64> {
    let ids = oracle_ids(text);
    let mut mean = vec![0f64; 32];
    for id in &ids {
        for (component, sum) in mean.iter_mut().enumerate() {
            *sum += ((splitmix64(u64::from(*id) * 32 + component as u64) % 2049) as f64 - 1024.0) / 1024.0;
        }
    }
    mean.iter().map(|x| x / ids.len() as f64).collect()
}

/// The oracle's cosine of two texts, in millionths.
pub fn oracle_score(a: &str, b: &str) -> i64 {
    let (x, y) = (oracle_vector(a), oracle_vector(b));
    let dot: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
    let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
    (dot / (norm(&x) * norm(&y)) * 1e6).round() as i64
}
