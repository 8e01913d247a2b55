//! Why an embedding use case failed.

use book::{BookError, ErrorClass};
use embed::EmbedError;

/// Why an embedding use case failed. Nothing was written in any case (a refresh
/// that fails part way keeps the vectors it filed, which are correct; see
/// [`crate::refresh`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SuggestError {
    /// The book failed (open, read, decide, append).
    #[error(transparent)]
    Book(#[from] BookError),
    /// The ONNX Runtime library is missing or cannot be loaded: the message says how
    /// to install it. Everything but embedding works without it.
    #[error("{0}")]
    Unavailable(EmbedError),
    /// The model or tokenizer file could not be read or loaded, or a text not
    /// embedded.
    #[error("{0}")]
    Embed(EmbedError),
    /// The book has no embedding model yet.
    #[error("the book has no embedding model: set one with `lorebank embed set-model` first")]
    NoModel,
    /// The files given are not the book's embedding model.
    #[error(
        "the model files are not the book's embedding model ({book}): {differences}; give the files the book's \
         model was set from, or set this one with `lorebank embed set-model` (the book's vectors then go stale and \
         `lorebank embed refresh` recomputes them)"
    )]
    NotTheBooksModel {
        /// The book's model, in one line.
        book: String,
        /// Every field that differs, with both values.
        differences: String,
    },
    /// Terms the use case needs have no vectors under the book's model.
    #[error(
        "{n_missing} of {n_terms} active terms have no vectors under the book's embedding model ({first} first): \
         run `lorebank embed refresh`"
    )]
    Stale {
        /// Terms without fresh vectors.
        n_missing: usize,
        /// Terms the use case reads.
        n_terms: usize,
        /// The first of them.
        first: ledger_model::RecordId,
    },
    /// The request itself is wrong (a bad option, a book without a language).
    #[error("{0}")]
    Invalid(String),
}

impl From<EmbedError> for SuggestError {
    fn from(error: EmbedError) -> SuggestError {
        match error {
            EmbedError::RuntimeMissing { .. } | EmbedError::RuntimeLoad { .. } | EmbedError::RuntimeConflict { .. } => {
                SuggestError::Unavailable(error)
            }
            other => SuggestError::Embed(other),
        }
    }
}

impl SuggestError {
    /// What kind of failure this is: a caller maps it as it maps a [`BookError`]. A
    /// missing runtime library, a bad model file and a model that is not the book's
    /// are invalid requests (nothing was written); so is a book whose vectors are
    /// stale.
    pub fn class(&self) -> ErrorClass {
        match self {
            SuggestError::Book(error) => error.class(),
            SuggestError::Embed(EmbedError::Run { .. } | EmbedError::Output { .. } | EmbedError::BadVector { .. }) => {
                ErrorClass::Storage
            }
            _ => ErrorClass::Invalid,
        }
    }

    /// Whether the failure is that embedding cannot run here at all (no ONNX Runtime
    /// library): a server answers that as unavailable, not as a bad request.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, SuggestError::Unavailable(_))
    }
}
