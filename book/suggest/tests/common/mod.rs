//! What the suggest tests share: the embed crate's committed tiny model read as a
//! book's model, and the terms of their small Chinese books (books, records and the
//! tiny model's oracle come from `test_support`).
#![allow(dead_code)]

use book::WriteOptions;
use ledger_model::*;
use suggest::{ModelFiles, ModelOptions};
use test_support::books::write_as;
use test_support::records::character;

// Each test file uses a part of these.
#[allow(unused_imports)]
pub use test_support::books::zh_book;
#[allow(unused_imports)]
pub use test_support::records::id;
#[allow(unused_imports)]
pub use test_support::tiny_model::{oracle_score, testdata};

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
    write_as("tool:embed")
}

/// A term of the books here: a character.
pub fn term(id_text: &str, src: &str, dst: &str) -> Body {
    Body::TermPut(character(id_text, src, dst))
}
