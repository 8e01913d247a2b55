//! Suggest: the embedding tier inside a book. It owns the use cases that need both
//! a book and an embedding model, one call each, which the CLI and the server call:
//! recording the book's model ([`set_model`]), keeping its terms' vectors
//! ([`refresh`], [`status`]), and turning what the vectors say into review candidates
//! ([`suggest()`]: spans of a chunk near a term, possible new aliases; [`dedupe()`]:
//! pairs of terms that are probably one entity).
//!
//! What it must not do: nothing it computes is injected or enters a snapshot, a
//! receipt or the hot path. Vectors are derived data in the ledger's derived set
//! [`VECTORS_SET`], filed by the model's identity and the texts they embed, checked on
//! every read and dropped rather than trusted; they can always be recomputed from the
//! log and the model files, and no event refers to them. Its only writes to the log
//! are `embedding_model_set` and `candidate_proposed` events with `origin: embedding`
//! and `trust: low`, through the book's one write path (`Book::submit_labelled`);
//! candidates change no snapshot until a reviewer accepts them. It reads the book's
//! full view: no party ever reaches it. `book` never depends on it (the crate graph
//! test enforces that), so everything but embedding runs without the ONNX Runtime
//! library, and here its absence is [`SuggestError::Unavailable`], saying how to
//! install it.
//!
//! # Overview
//!
//! * [`ModelFiles`] name an ONNX model and its tokenizer on this machine;
//!   [`set_model`] loads them with [`ModelOptions`] and records their identity as the
//!   book's `embedding_model_set`. [`Models::with_model`] runs a use case with the
//!   book's model, loaded from files ([`Model::for_book`]) and kept, refused, naming
//!   every difference, when their identity is not the book's; the CLI and the server
//!   both reach a book's model through it.
//! * [`refresh`] embeds each active term's texts (source, aliases, rendering, note)
//!   that have no vectors under the book's model, and drops stale vectors (another
//!   model's, or of texts since changed). [`status`] counts fresh, missing and stale
//!   vectors without loading a model.
//! * [`suggest()`] and [`dedupe()`] search the stored vectors by brute-force cosine
//!   and propose candidates; re-running them proposes nothing new.
//!
//! # Determinism
//!
//! The model runs on one thread with batch size 1 (the `embed` crate), search on the
//! calling thread; terms are read in id order, spans in text order, and every ranking
//! is total (score in fixed-point millionths, then term id or row order). The same
//! model files, book and input give the same candidates, with the same ids, scores
//! and evidence, in the same order.

#![deny(missing_docs, rustdoc::broken_intra_doc_links)]

pub mod dedupe;
mod error;
mod evidence;
pub mod model;
pub mod refresh;
pub mod suggest;
pub mod vectors;

pub use dedupe::{dedupe, Deduped, Pair, DEDUPE_PAIRS_MAX};
pub use error::SuggestError;
pub use model::{
    identity_of, model_id, set_model, Model, ModelFiles, ModelOptions, ModelSet, Models, DEDUPE_MIN_SCORE_DEFAULT,
    MODELS_KEPT, SUGGEST_MIN_SCORE_DEFAULT,
};
pub use refresh::{refresh, Refreshed, Skipped, REFRESH_TERMS_PER_COMMIT};
pub use suggest::{
    phrases_of, suggest, Phrase, PhraseSpan, Span, SuggestOptions, Suggested, PHRASES_MAX, PHRASE_CHARS_MAX,
    PHRASE_CHARS_MIN,
};
pub use vectors::{status, Role, VectorStatus, VECTORS_SET};

/// The actor of suggestions and dedupe pairs when none is named (`suggest()` and
/// `dedupe()` apply it; a caller passes its own identity as
/// [`book::Actor::Caller`]).
pub const DEFAULT_ACTOR: &str = "tool:embed";
