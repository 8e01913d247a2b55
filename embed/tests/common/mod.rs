//! What the embed tests share beside the tiny model's oracle (`test_support::tiny_model`):
//! the builder of its tokenizer and the model loaded with its options.
//!
//! Each test file uses a part of this module.
#![allow(dead_code)]

use embed::{EmbedOptions, Embedder, Pooling};
use test_support::tiny_model::{testdata, VOCAB_CHARS};
use tokenizers::models::wordlevel::WordLevel;
use tokenizers::normalizers::unicode::NFKC;
use tokenizers::normalizers::utils::{Lowercase, Sequence as NormalizerSequence};
use tokenizers::pre_tokenizers::sequence::Sequence as PreTokenizerSequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::pre_tokenizers::whitespace::WhitespaceSplit;
use tokenizers::{SplitDelimiterBehavior, Tokenizer};

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

/// The largest difference between an f32 vector and an f64 one.
pub fn max_difference(a: &[f32], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (f64::from(*x) - y).abs()).fold(0.0, f64::max)
}
