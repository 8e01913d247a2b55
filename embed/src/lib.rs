//! Embed: the low-trust candidate tier of lorebank — sentence embeddings of glossary
//! surfaces and source text, and brute-force cosine search over them.
//!
//! This crate owns three things: loading an ONNX sentence-embedding model with its
//! tokenizer ([`Embedder`]), the [`ModelIdentity`] that names exactly what made a
//! vector, and exact nearest-neighbour search over vectors in memory ([`Matrix`],
//! [`QuantizedMatrix`]). It depends on nothing in the workspace.
//!
//! What it must not do: it never opens or writes a book, and nothing it returns is
//! ever injected into a translation prompt. A caller turns its results into
//! `candidate_proposed` events with low trust, which change no snapshot until a
//! reviewer accepts them; `book` and the hot path never call it (the crate graph
//! test enforces that). Its only I/O is reading the model and tokenizer files and
//! loading the ONNX Runtime library.
//!
//! # Overview
//!
//! * [`Embedder::load`] reads an ONNX model and a `tokenizer.json` (the `tokenizers`
//!   crate), or a model that tokenizes in its graph, with [`EmbedOptions`] that state
//!   the model's name, [`Pooling`] and normalization. [`Embedder::embed`] turns texts
//!   into [`Vector`]s, in order, one graph run per [`EmbedOptions::batch_size`] texts,
//!   on one thread.
//! * [`ModelIdentity`]: name, blake3 of the model and the tokenizer (or "in-graph"),
//!   dim, dtype, pooling, normalization and the ONNX Runtime version, with a fixed byte
//!   form ([`ModelIdentity::to_bytes`], no floats, no maps) and an id
//!   ([`ModelIdentity::id`]). A book stores it as configuration; a vector made under
//!   another id is stale.
//! * [`Matrix`]: unit-length f32 rows; [`Matrix::search`] scores batched queries
//!   against every row and returns the top `k` per query as [`Neighbour`]s, ranked by
//!   [`Score`] (fixed-point millionths of the cosine, fit for hashed data) descending,
//!   ties broken by row index. [`Matrix::quantize`] gives a [`QuantizedMatrix`]
//!   (int8, one scale per row) with the same search.
//!
//! # Determinism
//!
//! The same model file, tokenizer file and options give the same identity; the same
//! text gives the same vector on the same machine (one intra-op and one inter-op
//! thread, deterministic compute, batch size 1 by default); the same matrix and
//! queries give the same neighbours in the same order (no threads, no hash maps, a total
//! order on results). docs/embeddings.md says what is not promised (bit equality
//! across CPU kinds and runtime versions, which the identity records).
//!
//! # Example: search
//!
//! ```
//! use embed::Matrix;
//!
//! let mut matrix = Matrix::new(3)?;
//! matrix.push(&[1.0, 0.0, 0.0])?; // row 0
//! matrix.push(&[0.0, 1.0, 0.0])?; // row 1
//! matrix.push(&[2.0, 0.0, 0.0])?; // row 2: the same direction as row 0
//! let neighbours = matrix.search_one(&[1.0, 0.1, 0.0], 2)?;
//! // Rows 0 and 2 tie (rows are scaled to unit length); the lower index comes first.
//! assert_eq!(neighbours.iter().map(|neighbour| neighbour.index).collect::<Vec<_>>(), [0, 2]);
//! assert_eq!(neighbours[0].score.millionths(), 995_037);
//! assert_eq!(neighbours[0].score, neighbours[1].score);
//!
//! // int8: a quarter of the memory, the same top neighbours when scores are well apart.
//! let quantized = matrix.quantize();
//! let neighbours = quantized.search_one(&[0.0, 1.0, 0.2], 1)?;
//! assert_eq!(neighbours[0].index, 1);
//! # Ok::<(), embed::SearchError>(())
//! ```
//!
//! # Example: embedding
//!
//! ```no_run
//! use std::path::Path;
//! use embed::{EmbedOptions, Embedder, Matrix, Pooling};
//!
//! let options = EmbedOptions::new("multilingual-e5-small", Pooling::Mean, true);
//! let mut embedder = Embedder::load(Path::new("model.onnx"), Some(Path::new("tokenizer.json")), options)?;
//! println!("{} id {}", embedder.identity(), embedder.identity().id());
//! let surfaces = ["萧炎", "萧薰儿", "药老"];
//! let vectors = embedder.embed(&surfaces)?;
//! let matrix = Matrix::from_rows(embedder.dim(), vectors.iter().map(|vector| vector.as_slice()))?;
//! let query = embedder.embed_one("蕭炎")?;
//! for neighbour in matrix.search_one(query.as_slice(), 2)? {
//!     println!("{} {}", surfaces[neighbour.index as usize], neighbour.score);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The ONNX Runtime library
//!
//! The library is loaded when the first model is (never linked), from
//! [`RuntimeLocation::Path`], else `ORT_DYLIB_PATH`, else [`default_runtime_path`]
//! (where `scripts/setup.sh` unzips it from the `onnxruntime` wheel on PyPI). When it
//! is not there, loading a model is [`EmbedError::RuntimeMissing`], whose message says
//! how to install it; everything else in this crate works without it.
//!
//! # Lower-level APIs you can ignore
//!
//! [`ModelIdentity::from_bytes`] and [`Vector::from_le_bytes`] read stored bytes back;
//! [`loaded_runtime_path`] says which library this process loaded.

#![deny(missing_docs, rustdoc::broken_intra_doc_links)]

mod embedder;
mod error;
mod identity;
mod runtime;
mod search;

pub use embedder::{
    EmbedOptions, Embedder, BATCH_SIZE_MAX, DIM_MAX, OPERATOR_LIBRARIES_MAX, TEXTS_PER_CALL_MAX, TOKENS_MAX_DEFAULT,
    TOKENS_MAX_LIMIT,
};
pub use error::EmbedError;
pub use identity::{
    Dtype, IdentityError, ModelIdentity, ModelIdentityId, Pooling, TokenizerId, IDENTITY_CONTEXT, IDENTITY_FORMAT,
    IDENTITY_FORMAT_OPERATORS, IDENTITY_TEXT_BYTES_MAX,
};
pub use runtime::{
    default_runtime_path, loaded_runtime_path, RuntimeLocation, RuntimeSource, RUNTIME_INSTALL_HINT, RUNTIME_VERSION,
};
pub use search::{
    Matrix, Neighbour, QuantizedMatrix, Score, SearchError, Subject, Vector, QUERIES_PER_CALL_MAX, ROWS_MAX,
};
