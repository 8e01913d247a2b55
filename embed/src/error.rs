//! The errors of loading a model and embedding texts.

use std::path::PathBuf;

use crate::runtime::{RuntimeSource, RUNTIME_INSTALL_HINT};

/// Why a model could not be loaded or a text not embedded.
///
/// Every message is lowercase and names the file, field, text index or limit at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// The ONNX Runtime library is not at the path the rules chose.
    #[error("the ONNX Runtime library is missing: no file {} (from {source_rule}); {RUNTIME_INSTALL_HINT}", path.display())]
    RuntimeMissing {
        /// The file looked for.
        path: PathBuf,
        /// The rule that chose it.
        source_rule: RuntimeSource,
    },
    /// The library is there but could not be loaded (not a library, too old, ...).
    #[error("the ONNX Runtime library {} could not be loaded: {reason}; {RUNTIME_INSTALL_HINT}", path.display())]
    RuntimeLoad {
        /// The file.
        path: PathBuf,
        /// What the loader said.
        reason: String,
    },
    /// This process already loaded another ONNX Runtime library (one per process).
    #[error(
        "this process already loaded the ONNX Runtime library {} and cannot load {} as well",
        loaded.display(),
        requested.display()
    )]
    RuntimeConflict {
        /// The library in use.
        loaded: PathBuf,
        /// The library asked for.
        requested: PathBuf,
    },
    /// A file could not be read.
    #[error("cannot read {}: {reason}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        reason: String,
    },
    /// ONNX Runtime refused the model file (not an ONNX graph, truncated, unknown ops).
    #[error("the model {} is not a graph ONNX Runtime can load: {reason}", path.display())]
    Model {
        /// The model file.
        path: PathBuf,
        /// What ONNX Runtime said.
        reason: String,
    },
    /// ONNX Runtime could not register a custom-operator library (not a library, no
    /// `RegisterCustomOps`, a symbol it cannot resolve, built for another runtime).
    #[error("the operator library {} cannot be registered: {reason}", path.display())]
    OperatorLibrary {
        /// The library file.
        path: PathBuf,
        /// What ONNX Runtime said.
        reason: String,
    },
    /// The graph's inputs or outputs are not those of a sentence-embedding model.
    #[error("the model {} does not fit: {reason}", path.display())]
    Signature {
        /// The model file.
        path: PathBuf,
        /// What does not fit.
        reason: String,
    },
    /// The tokenizer file is not a `tokenizer.json` the `tokenizers` crate reads.
    #[error("the tokenizer {} cannot be read: {reason}", path.display())]
    Tokenizer {
        /// The tokenizer file.
        path: PathBuf,
        /// What the `tokenizers` crate said.
        reason: String,
    },
    /// The options contradict each other or the model.
    #[error("invalid embed options: {reason}")]
    Options {
        /// What is wrong.
        reason: String,
    },
    /// A text could not be tokenized.
    #[error("text {index} cannot be tokenized: {reason}")]
    Tokenize {
        /// Its index in the call.
        index: usize,
        /// What the tokenizer said.
        reason: String,
    },
    /// A text gives no tokens, so it has no vector.
    #[error("text {index} gives no tokens")]
    NoTokens {
        /// Its index in the call.
        index: usize,
    },
    /// A text gives more tokens than the limit; it is never truncated.
    #[error("text {index} gives {n_tokens} tokens, more than the limit of {tokens_max}")]
    TooManyTokens {
        /// Its index in the call.
        index: usize,
        /// Its token count.
        n_tokens: usize,
        /// The limit ([`crate::EmbedOptions::tokens_max`]).
        tokens_max: usize,
    },
    /// More texts in one call than [`crate::TEXTS_PER_CALL_MAX`].
    #[error("{n_texts} texts in one call, more than the limit of {texts_max}")]
    TooManyTexts {
        /// The texts given.
        n_texts: usize,
        /// The limit.
        texts_max: usize,
    },
    /// Running the graph failed.
    #[error("running the model failed on texts {first}..{end}: {reason}")]
    Run {
        /// The first text of the failed batch.
        first: usize,
        /// One past its last text.
        end: usize,
        /// What ONNX Runtime said.
        reason: String,
    },
    /// The graph's output has another shape or type than the model declared.
    #[error("the model's output {output} on texts {first}..{end} is {found}, expected {expected}")]
    Output {
        /// The output name.
        output: String,
        /// The first text of the batch.
        first: usize,
        /// One past its last text.
        end: usize,
        /// What was expected.
        expected: String,
        /// What came.
        found: String,
    },
    /// A vector holds a NaN or an infinity, or is zero where it must be normalized.
    #[error("the vector of text {index} is {what}")]
    BadVector {
        /// The text.
        index: usize,
        /// `not finite` or `zero and cannot be normalized`.
        what: &'static str,
    },
}
