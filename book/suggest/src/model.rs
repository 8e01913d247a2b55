//! The book's embedding model: its identity as configuration (`embedding_model_set`),
//! and loading the files a caller names as that model, or refusing them.

use std::path::PathBuf;

use book::{Book, Labelled, WriteOptions, Written};
use embed::{EmbedOptions, Embedder, ModelIdentity, ModelIdentityId, Pooling, TokenizerId, Vector};
use ledger_model::*;

use crate::error::SuggestError;

/// Default [`EmbeddingModelSet::suggest_min_score`]: a cosine of 0.80.
pub const SUGGEST_MIN_SCORE_DEFAULT: i32 = 800_000;
/// Default [`EmbeddingModelSet::dedupe_min_score`]: a cosine of 0.92.
pub const DEDUPE_MIN_SCORE_DEFAULT: i32 = 920_000;

/// The files of an embedding model on this machine: the ONNX graph, its
/// `tokenizer.json` (none when the graph tokenizes) and the custom-operator libraries
/// its graph needs (onnxruntime-extensions' for a graph with a SentencePiece tokenizer
/// inside). A book stores what they are (their identity), never where they are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelFiles {
    /// The ONNX model file.
    pub model: PathBuf,
    /// The tokenizer file, if the graph takes token ids.
    pub tokenizer: Option<PathBuf>,
    /// Custom-operator libraries ONNX Runtime registers before loading the graph, in
    /// order (`embed::EmbedOptions::operator_library`).
    pub operator_libraries: Vec<PathBuf>,
}

impl ModelFiles {
    /// `options` with these files' operator libraries.
    fn with_libraries(&self, mut options: EmbedOptions) -> EmbedOptions {
        for library in &self.operator_libraries {
            options = options.operator_library(library.clone());
        }
        options
    }
}

/// How to read a model, and the lowest scores of what it suggests: what
/// [`set_model`] records besides what the files are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelOptions {
    /// The name to record (`multilingual-e5-small`).
    pub name: String,
    /// How token vectors become one vector per text.
    pub pooling: EmbeddingPooling,
    /// Whether vectors are scaled to unit length.
    pub normalize: bool,
    /// The graph output to read; `None`: the first.
    pub output: Option<String>,
    /// The vector dimension, for a graph whose output does not declare it.
    pub dim: Option<u32>,
    /// [`EmbeddingModelSet::suggest_min_score`].
    pub suggest_min_score: i32,
    /// [`EmbeddingModelSet::dedupe_min_score`].
    pub dedupe_min_score: i32,
}

impl ModelOptions {
    /// Options for the model called `name` with the default scores.
    pub fn new(name: impl Into<String>, pooling: EmbeddingPooling, normalize: bool) -> ModelOptions {
        ModelOptions {
            name: name.into(),
            pooling,
            normalize,
            output: None,
            dim: None,
            suggest_min_score: SUGGEST_MIN_SCORE_DEFAULT,
            dedupe_min_score: DEDUPE_MIN_SCORE_DEFAULT,
        }
    }
}

/// The lowest score a use case proposes: `asked`, else the book's `default` (a score
/// of its `embedding_model_set`); one outside -[`limits::SCORE_MAX`]..=[`limits::SCORE_MAX`]
/// millionths is refused.
pub(crate) fn min_score(asked: Option<i32>, default: i32) -> Result<i32, SuggestError> {
    let min_score = asked.unwrap_or(default);
    if !(-limits::SCORE_MAX..=limits::SCORE_MAX).contains(&min_score) {
        return Err(SuggestError::Invalid(format!(
            "min score {min_score} is outside -{0}..={0} (millionths)",
            limits::SCORE_MAX
        )));
    }
    Ok(min_score)
}

fn pooling(pooling: EmbeddingPooling) -> Pooling {
    match pooling {
        EmbeddingPooling::Mean => Pooling::Mean,
        EmbeddingPooling::Cls => Pooling::Cls,
        EmbeddingPooling::InGraph => Pooling::InGraph,
    }
}

fn book_pooling(pooling: Pooling) -> Result<EmbeddingPooling, SuggestError> {
    match pooling {
        Pooling::Mean => Ok(EmbeddingPooling::Mean),
        Pooling::Cls => Ok(EmbeddingPooling::Cls),
        Pooling::InGraph => Ok(EmbeddingPooling::InGraph),
        other => Err(SuggestError::Invalid(format!("pooling {} has no form in a book yet", other.as_str()))),
    }
}

/// The `embed` identity an `embedding_model_set` records.
pub fn identity_of(set: &EmbeddingModelSet) -> ModelIdentity {
    ModelIdentity {
        name: set.name.clone(),
        model_blake3: set.model_blake3.0,
        tokenizer: set.tokenizer_blake3.map_or(TokenizerId::InGraph, |hash| TokenizerId::File(hash.0)),
        dim: set.dim,
        dtype: embed::Dtype::F32,
        pooling: pooling(set.pooling),
        normalized: set.normalized,
        runtime_version: set.runtime_version.clone(),
        operator_libraries: set.operator_libraries_blake3.iter().map(|hash| hash.0).collect(),
    }
}

/// The id the book's vectors are filed under: the `embed` identity id.
pub fn model_id(set: &EmbeddingModelSet) -> ModelIdentityId {
    identity_of(set).id()
}

/// The book's embedding model, or [`SuggestError::NoModel`].
pub fn book_model(state: &projections::State) -> Result<&EmbeddingModelSet, SuggestError> {
    state.embedding_model().map(|(set, _)| set).ok_or(SuggestError::NoModel)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A loaded embedding model that is the book's: every vector it makes is filed under
/// the book's model id.
pub struct Model {
    embedder: Embedder,
    set: EmbeddingModelSet,
    id: ModelIdentityId,
    key: [u8; 32],
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model").field("identity", self.embedder.identity()).finish_non_exhaustive()
    }
}

impl Model {
    /// Loads `files` as the embedding model `set` (the options it records) and checks
    /// that they are that model: the same model and tokenizer bytes, dimension and
    /// runtime version. Refused, naming every difference, when they are not.
    pub fn load(files: &ModelFiles, set: &EmbeddingModelSet) -> Result<Model, SuggestError> {
        let mut options = EmbedOptions::new(set.name.clone(), pooling(set.pooling), set.normalized).dim(set.dim);
        if let Some(output) = &set.output {
            options = options.output(output.clone());
        }
        let embedder = Embedder::load(&files.model, files.tokenizer.as_deref(), files.with_libraries(options))?;
        let found = embedder.identity();
        let wanted = identity_of(set);
        if *found != wanted {
            let mut differences = Vec::new();
            if found.model_blake3 != wanted.model_blake3 {
                differences.push(format!(
                    "the model file {} has blake3 {}, the book's model {}",
                    files.model.display(),
                    hex(&found.model_blake3),
                    hex(&wanted.model_blake3)
                ));
            }
            if found.tokenizer != wanted.tokenizer {
                differences.push(format!("the tokenizer is {}, the book's {}", found.tokenizer, wanted.tokenizer));
            }
            if found.dim != wanted.dim {
                differences.push(format!("the dim is {}, the book's {}", found.dim, wanted.dim));
            }
            if found.operator_libraries != wanted.operator_libraries {
                let hashes = |hashes: &[[u8; 32]]| match hashes {
                    [] => "none".to_owned(),
                    hashes => hashes.iter().map(|hash| hex(hash)).collect::<Vec<_>>().join(", "),
                };
                differences.push(format!(
                    "the operator libraries given ({}) have blake3 {}, the book's model {}",
                    if files.operator_libraries.is_empty() {
                        "none".to_owned()
                    } else {
                        files
                            .operator_libraries
                            .iter()
                            .map(|path| path.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                    hashes(&found.operator_libraries),
                    hashes(&wanted.operator_libraries)
                ));
            }
            if found.runtime_version != wanted.runtime_version {
                differences.push(format!(
                    "ONNX Runtime is {}, the book's model was identified with {}",
                    found.runtime_version, wanted.runtime_version
                ));
            }
            if differences.is_empty() {
                differences.push(format!("the identity is {found}"));
            }
            return Err(SuggestError::NotTheBooksModel {
                book: wanted.to_string(),
                differences: differences.join("; "),
            });
        }
        let id = found.id();
        Ok(Model { embedder, set: set.clone(), id, key: crate::vectors::model_key(set) })
    }

    /// Loads `files` as the embedding model of `book` at its head.
    pub fn for_book(book: &mut Book, files: &ModelFiles) -> Result<Model, SuggestError> {
        let state = book.state(None)?;
        Model::load(files, book_model(&state)?)
    }

    /// The model's identity.
    pub fn identity(&self) -> &ModelIdentity {
        self.embedder.identity()
    }

    /// The model's identity id, which its vectors are filed under.
    pub fn id(&self) -> ModelIdentityId {
        self.id
    }

    /// The model part of the keys its vectors are filed under
    /// ([`crate::vectors::model_key`]).
    pub fn vectors_key(&self) -> [u8; 32] {
        self.key
    }

    /// The `embedding_model_set` it was loaded as.
    pub fn set(&self) -> &EmbeddingModelSet {
        &self.set
    }

    /// Whether this is the model `set` names (its identity and output; the scores may
    /// differ, they do not change a vector).
    pub fn is(&self, set: &EmbeddingModelSet) -> bool {
        model_id(set) == self.id && set.output == self.set.output
    }

    /// Refuses the book's model when it is not this one.
    pub(crate) fn check(&self, set: &EmbeddingModelSet) -> Result<(), SuggestError> {
        if self.is(set) {
            return Ok(());
        }
        Err(SuggestError::NotTheBooksModel {
            book: identity_of(set).to_string(),
            differences: format!("the model loaded is {}", self.identity()),
        })
    }

    /// One vector per text, in order.
    pub(crate) fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vector>, SuggestError> {
        Ok(self.embedder.embed(texts)?)
    }
}

/// The models most a [`Models`] keeps loaded (the books of one library usually share
/// one).
pub const MODELS_KEPT: usize = 4;

/// The embedding models loaded from one set of model files, each checked to be a
/// book's model before it is used: what every caller reaches a book's model through
/// ([`Models::with_model`]). A server keeps one for all its books; a command makes
/// one for its one call.
#[derive(Debug)]
pub struct Models {
    files: ModelFiles,
    loaded: std::sync::Mutex<Vec<Model>>,
}

impl Models {
    /// No model loaded yet from `files`.
    pub fn new(files: ModelFiles) -> Models {
        Models { files, loaded: std::sync::Mutex::new(Vec::new()) }
    }

    /// The model files.
    pub fn files(&self) -> &ModelFiles {
        &self.files
    }

    /// Runs `work` with the model of `book` at its head: one loaded before from these
    /// files that is the book's, or the files loaded now and checked to be it
    /// ([`Model::load`]: refused, naming every difference, when they are not).
    /// [`SuggestError::NoModel`] when the book has none. The least recently loaded
    /// model goes when more than [`MODELS_KEPT`] would be kept.
    pub fn with_model<T>(
        &self,
        book: &mut Book,
        work: impl FnOnce(&mut Book, &mut Model) -> Result<T, SuggestError>,
    ) -> Result<T, SuggestError> {
        // The head is let go of before `work`, so a write of it changes the head in
        // place instead of copying it.
        let set = book_model(&*book.state(None)?)?.clone();
        let mut loaded = self.loaded.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let index = match loaded.iter().position(|model| model.is(&set)) {
            Some(index) => index,
            None => {
                let model = Model::load(&self.files, &set)?;
                if loaded.len() >= MODELS_KEPT {
                    loaded.remove(0);
                }
                loaded.push(model);
                loaded.len() - 1
            }
        };
        work(book, &mut loaded[index])
    }
}

/// What [`set_model`] recorded.
#[derive(Debug)]
pub struct ModelSet {
    /// The model as recorded.
    pub set: EmbeddingModelSet,
    /// Its id (the vectors' key).
    pub id: ModelIdentityId,
    /// Whether it replaced another model (whose vectors are now stale).
    pub replaced: Option<EmbeddingModelSet>,
    /// The write; `None` when the book already had exactly this model.
    pub written: Option<Written>,
}

/// Loads `files` with `options` (which needs the ONNX Runtime library) and records
/// their identity as the book's embedding model, in one `embedding_model_set`
/// through the one write path. Vectors of another model go stale: `refresh`
/// recomputes them. Setting the model the book has writes nothing.
pub fn set_model(
    book: &mut Book,
    files: &ModelFiles,
    options: &ModelOptions,
    write: &WriteOptions,
) -> Result<ModelSet, SuggestError> {
    for (field, score) in
        [("suggest_min_score", options.suggest_min_score), ("dedupe_min_score", options.dedupe_min_score)]
    {
        if !(0..=limits::SCORE_MAX).contains(&score) {
            return Err(SuggestError::Invalid(format!(
                "{field}: {score} is outside 0..={} (millionths of a cosine)",
                limits::SCORE_MAX
            )));
        }
    }
    let mut embed_options = EmbedOptions::new(options.name.clone(), pooling(options.pooling), options.normalize);
    if let Some(output) = &options.output {
        embed_options = embed_options.output(output.clone());
    }
    if let Some(dim) = options.dim {
        embed_options = embed_options.dim(dim);
    }
    let embedder = Embedder::load(&files.model, files.tokenizer.as_deref(), files.with_libraries(embed_options))?;
    let identity = embedder.identity();
    let set = EmbeddingModelSet {
        name: identity.name.clone(),
        model_blake3: Hash32(identity.model_blake3),
        tokenizer_blake3: match identity.tokenizer {
            TokenizerId::File(hash) => Some(Hash32(hash)),
            TokenizerId::InGraph => None,
        },
        dim: identity.dim,
        dtype: VectorDtype::F32,
        pooling: book_pooling(identity.pooling)?,
        normalized: identity.normalized,
        runtime_version: identity.runtime_version.clone(),
        output: options.output.clone(),
        suggest_min_score: options.suggest_min_score,
        dedupe_min_score: options.dedupe_min_score,
        operator_libraries_blake3: identity.operator_libraries.iter().copied().map(Hash32).collect(),
    };
    let id = identity.id();
    let state = book.state(None)?;
    let replaced = state.embedding_model().map(|(current, _)| current.clone()).filter(|current| *current != set);
    // The write changes the head in place once nothing here holds it.
    drop(state);
    let written = book.submit_labelled(
        write,
        Labelled::numbered(vec![Body::EmbeddingModelSet(set.clone())], "embed"),
        Vec::new(),
    )?;
    let written = written.submitted.appended.is_some().then_some(written);
    Ok(ModelSet { set, id, replaced, written })
}
