//! Loading a model and embedding texts.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use ort::session::builder::{GraphOptimizationLevel, SessionBuilder};
use ort::session::{Session, SessionInputValue};
use ort::value::{Tensor, TensorElementType, ValueType};
use tokenizers::Tokenizer;

use crate::identity::{Dtype, ModelIdentity, Pooling, TokenizerId, IDENTITY_TEXT_BYTES_MAX};
use crate::runtime::{self, Runtime, RuntimeLocation};
use crate::{EmbedError, Vector};

/// The most texts one [`Embedder::embed`] call takes.
pub const TEXTS_PER_CALL_MAX: usize = 65_536;
/// The most texts one run of the graph takes ([`EmbedOptions::batch_size`]).
pub const BATCH_SIZE_MAX: usize = 256;
/// The default and the largest [`EmbedOptions::tokens_max`].
pub const TOKENS_MAX_DEFAULT: usize = 512;
/// The largest [`EmbedOptions::tokens_max`].
pub const TOKENS_MAX_LIMIT: usize = 8_192;
/// The largest vector dimension.
pub const DIM_MAX: u32 = 8_192;
/// The most custom-operator libraries one model loads ([`EmbedOptions::operator_library`]).
pub const OPERATOR_LIBRARIES_MAX: usize = 8;

/// How to load a model: what goes into its [`ModelIdentity`] (name, pooling,
/// normalization) and how it is run.
///
/// The name, pooling and normalization have no defaults: they are facts about the
/// model the caller must state, and they change the vectors.
#[derive(Clone, Debug)]
pub struct EmbedOptions {
    name: String,
    pooling: Pooling,
    normalize: bool,
    output: Option<String>,
    dim: Option<u32>,
    batch_size: usize,
    tokens_max: usize,
    runtime: RuntimeLocation,
    operator_libraries: Vec<PathBuf>,
}

impl EmbedOptions {
    /// Options for the model called `name`, pooled with `pooling`, and L2-normalized
    /// when `normalize` is true (what sentence-transformers' `Normalize` module does;
    /// cosine search normalizes anyway, so `true` only changes the stored vectors).
    pub fn new(name: impl Into<String>, pooling: Pooling, normalize: bool) -> EmbedOptions {
        EmbedOptions {
            name: name.into(),
            pooling,
            normalize,
            output: None,
            dim: None,
            batch_size: 1,
            tokens_max: TOKENS_MAX_DEFAULT,
            runtime: RuntimeLocation::Discover,
            operator_libraries: Vec::new(),
        }
    }

    /// The graph output the vectors are read from. Default: the graph's first output.
    /// Token-level outputs are `[batch, tokens, dim]` (e.g. `last_hidden_state`) and
    /// need [`Pooling::Mean`] or [`Pooling::Cls`]; pooled outputs are `[batch, dim]`
    /// (e.g. `sentence_embedding`) and need [`Pooling::InGraph`].
    pub fn output(mut self, name: impl Into<String>) -> EmbedOptions {
        self.output = Some(name.into());
        self
    }

    /// The vector dimension, for graphs whose output does not declare it. When both
    /// the graph and this option give one, they must agree.
    pub fn dim(mut self, dim: u32) -> EmbedOptions {
        self.dim = Some(dim);
        self
    }

    /// How many texts go through the graph in one run, 1 to [`BATCH_SIZE_MAX`].
    ///
    /// Default 1: each text is run alone, so its vector is the same bit for bit
    /// whatever it is embedded with. Larger batches are faster on real models, but
    /// the texts of a batch are padded to its longest, and a transformer's kernels may
    /// then sum in another order: a vector can differ in its last bits with its
    /// neighbours. Pick 1 when the vectors are compared with stored ones.
    pub fn batch_size(mut self, batch_size: usize) -> EmbedOptions {
        self.batch_size = batch_size;
        self
    }

    /// The most tokens a text may give (special tokens included), 1 to
    /// [`TOKENS_MAX_LIMIT`]; default [`TOKENS_MAX_DEFAULT`]. A longer text is an error,
    /// never truncated.
    pub fn tokens_max(mut self, tokens_max: usize) -> EmbedOptions {
        self.tokens_max = tokens_max;
        self
    }

    /// Where the ONNX Runtime library is. Default: [`RuntimeLocation::Discover`].
    pub fn runtime(mut self, location: RuntimeLocation) -> EmbedOptions {
        self.runtime = location;
        self
    }

    /// A custom-operator library (a shared library exporting `RegisterCustomOps`, such
    /// as onnxruntime-extensions') that ONNX Runtime registers on the session before
    /// it loads the graph, for graphs with operators of other domains (a
    /// SentencePiece tokenizer inside the graph). Libraries are registered in the
    /// order given, at most [`OPERATOR_LIBRARIES_MAX`]; each one's blake3 is part of
    /// the [`ModelIdentity`], since its code computes part of every vector.
    ///
    /// ONNX Runtime loads the file itself (`dlopen` with local symbols): it must
    /// resolve every symbol it needs from its own dependencies (docs/embeddings.md
    /// says how `scripts/setup.sh --real-model` prepares onnxruntime-extensions').
    pub fn operator_library(mut self, path: impl Into<PathBuf>) -> EmbedOptions {
        self.operator_libraries.push(path.into());
        self
    }
}

/// The integer type of a token input.
#[derive(Clone, Copy, Debug)]
enum IntType {
    I64,
    I32,
}

/// What a token input carries.
#[derive(Clone, Copy, Debug)]
enum TokenField {
    Ids,
    Mask,
    TypeIds,
}

/// How texts enter the graph.
#[derive(Debug)]
enum Inputs {
    /// Token inputs in the graph's order, from a `tokenizer.json`.
    Tokens { tokenizer: Box<Tokenizer>, inputs: Vec<(String, TokenField, IntType)> },
    /// One string tensor `[batch]`; the graph tokenizes.
    Strings { name: String },
}

/// A loaded sentence-embedding model: an ONNX graph, its tokenizer (or one inside
/// the graph) and the pooling and normalization declared for it.
///
/// The graph runs on one intra-op and one inter-op thread, sequentially, with
/// deterministic compute asked of ONNX Runtime, so the same model and the same text
/// give the same vector on the same machine.
pub struct Embedder {
    session: Session,
    inputs: Inputs,
    output: String,
    /// `true`: the output is `[batch, tokens, dim]`; `false`: `[batch, dim]`.
    token_level: bool,
    identity: ModelIdentity,
    model_path: PathBuf,
    batch_size: usize,
    tokens_max: usize,
    runtime: Runtime,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("model_path", &self.model_path)
            .field("identity", &self.identity)
            .field("output", &self.output)
            .finish_non_exhaustive()
    }
}

fn read(path: &Path) -> Result<Vec<u8>, EmbedError> {
    std::fs::read(path).map_err(|error| EmbedError::Read { path: path.to_owned(), reason: error.to_string() })
}

fn describe(value_type: &ValueType) -> String {
    match value_type {
        ValueType::Tensor { ty, shape, .. } => {
            let dims: Vec<String> =
                shape.iter().map(|dim| if *dim < 0 { "?".to_owned() } else { dim.to_string() }).collect();
            format!("{ty:?} tensor [{}]", dims.join(", "))
        }
        other => format!("{other:?}"),
    }
}

/// The graph's signature does not fit: `reason` says how.
fn signature(model_path: &Path, reason: String) -> EmbedError {
    EmbedError::Signature { path: model_path.to_owned(), reason }
}

/// Reads and parses a `tokenizer.json`, with no truncation (a limit is an error here,
/// never a silent cut) and no padding (padding is ours); and the blake3 of its bytes.
fn load_tokenizer(path: &Path) -> Result<(Box<Tokenizer>, [u8; 32]), EmbedError> {
    let bytes = read(path)?;
    let hash = *blake3::hash(&bytes).as_bytes();
    let bad = |reason: String| EmbedError::Tokenizer { path: path.to_owned(), reason };
    let mut tokenizer = Tokenizer::from_bytes(&bytes).map_err(|error| bad(error.to_string()))?;
    tokenizer.with_truncation(None).map_err(|error| bad(error.to_string()))?;
    tokenizer.with_padding(None);
    Ok((Box::new(tokenizer), hash))
}

/// An ONNX Runtime session of the model's bytes, with the operator libraries
/// registered.
fn open_session(
    runtime: &Runtime,
    model_path: &Path,
    model_bytes: &[u8],
    operator_libraries: &[PathBuf],
) -> Result<Session, EmbedError> {
    let model_error = |reason: String| EmbedError::Model { path: model_path.to_owned(), reason };
    let mut builder = session_builder(runtime).map_err(model_error)?;
    for path in operator_libraries {
        builder = builder
            .with_operator_library(path)
            .map_err(|error| EmbedError::OperatorLibrary { path: path.clone(), reason: error.to_string() })?;
    }
    builder.commit_from_memory(model_bytes).map_err(|error| model_error(error.to_string()))
}

/// What the graph takes: one string input (a graph that tokenizes, given no
/// tokenizer), or token inputs fed by `tokenizer`.
fn graph_inputs(
    session: &Session,
    model_path: &Path,
    tokenizer: Option<(Box<Tokenizer>, [u8; 32])>,
) -> Result<(Inputs, TokenizerId), EmbedError> {
    let string_inputs: Vec<&str> = session
        .inputs()
        .iter()
        .filter(|input| matches!(input.dtype(), ValueType::Tensor { ty: TensorElementType::String, .. }))
        .map(|input| input.name())
        .collect();
    if let Some(first) = string_inputs.first() {
        if session.inputs().len() != 1 {
            return Err(signature(
                model_path,
                format!(
                    "it has a string input {first} beside {} other inputs; a graph that tokenizes takes one string input",
                    session.inputs().len() - 1
                ),
            ));
        }
        if tokenizer.is_some() {
            return Err(EmbedError::Options {
                reason: format!("the model tokenizes in its graph (string input {first}); pass no tokenizer"),
            });
        }
        return Ok((Inputs::Strings { name: (*first).to_owned() }, TokenizerId::InGraph));
    }
    let Some((tokenizer, hash)) = tokenizer else {
        return Err(EmbedError::Options {
            reason: "the model takes token ids, so it needs a tokenizer.json".to_owned(),
        });
    };
    let mut inputs = Vec::new();
    for input in session.inputs() {
        let field = match input.name() {
            "input_ids" => TokenField::Ids,
            "attention_mask" => TokenField::Mask,
            "token_type_ids" => TokenField::TypeIds,
            other => {
                return Err(signature(
                    model_path,
                    format!("input {other} is not one of input_ids, attention_mask, token_type_ids"),
                ))
            }
        };
        let int_type = match input.dtype() {
            ValueType::Tensor { ty: TensorElementType::Int64, shape, .. } if shape.len() == 2 => IntType::I64,
            ValueType::Tensor { ty: TensorElementType::Int32, shape, .. } if shape.len() == 2 => IntType::I32,
            other => {
                return Err(signature(
                    model_path,
                    format!(
                        "input {} is {}, expected an int64 or int32 tensor [batch, tokens]",
                        input.name(),
                        describe(other)
                    ),
                ))
            }
        };
        inputs.push((input.name().to_owned(), field, int_type));
    }
    if !inputs.iter().any(|(_, field, _)| matches!(field, TokenField::Ids)) {
        return Err(signature(model_path, "it has no input_ids input".to_owned()));
    }
    Ok((Inputs::Tokens { tokenizer, inputs }, TokenizerId::File(hash)))
}

/// The output the vectors are read from.
struct GraphOutput {
    name: String,
    /// Whether it holds a vector per token (pooled here) rather than per text.
    token_level: bool,
    dim: u32,
}

/// The output named in `options` (else the first): a float32 tensor of the rank its
/// pooling needs, and its dim, declared by the graph or given (both: the same).
fn graph_output(
    session: &Session,
    model_path: &Path,
    options: &EmbedOptions,
    inputs: &Inputs,
) -> Result<GraphOutput, EmbedError> {
    let signature = |reason: String| signature(model_path, reason);
    let output_names: Vec<&str> = session.outputs().iter().map(|output| output.name()).collect();
    let output = match &options.output {
        Some(name) => session.outputs().iter().find(|output| output.name() == name).ok_or_else(|| {
            signature(format!("it has no output {name}; its outputs are {}", output_names.join(", ")))
        })?,
        None => session.outputs().first().ok_or_else(|| signature("it has no output".to_owned()))?,
    };
    let ValueType::Tensor { ty: TensorElementType::Float32, shape, .. } = output.dtype() else {
        return Err(signature(format!(
            "output {} is {}, expected a float32 tensor",
            output.name(),
            describe(output.dtype())
        )));
    };
    let token_level = match (shape.len(), options.pooling) {
        (3, Pooling::Mean | Pooling::Cls) => true,
        (2, Pooling::InGraph) => false,
        (rank, pooling) => {
            return Err(signature(format!(
                "output {} is {}; pooling {} needs {}",
                output.name(),
                describe(output.dtype()),
                pooling.as_str(),
                if pooling == Pooling::InGraph {
                    "[batch, dim]".to_owned()
                } else if rank == 2 {
                    "[batch, tokens, dim] (this output is already pooled: use pooling in-graph)".to_owned()
                } else {
                    "[batch, tokens, dim]".to_owned()
                }
            )))
        }
    };
    if token_level && matches!(inputs, Inputs::Strings { .. }) {
        return Err(signature("a graph that tokenizes must output pooled vectors [batch, dim]".to_owned()));
    }
    let declared = shape.last().copied().filter(|dim| *dim > 0);
    let dim = match (declared, options.dim) {
        (Some(declared), Some(given)) if declared != i64::from(given) => {
            return Err(EmbedError::Options {
                reason: format!("dim {given} was given, but output {} declares {declared}", output.name()),
            })
        }
        (_, Some(given)) => given,
        (Some(declared), None) => u32::try_from(declared)
            .ok()
            .filter(|dim| *dim <= DIM_MAX)
            .ok_or_else(|| signature(format!("output dim {declared} is over the limit of {DIM_MAX}")))?,
        (None, None) => {
            return Err(EmbedError::Options {
                reason: format!("output {} does not declare its dim; pass it with EmbedOptions::dim", output.name()),
            })
        }
    };
    Ok(GraphOutput { name: output.name().to_owned(), token_level, dim })
}

impl Embedder {
    /// Loads the ONNX model at `model_path` with the `tokenizer.json` at
    /// `tokenizer_path`, or with none when the graph takes strings and tokenizes them
    /// itself.
    ///
    /// Reads both files once, hashes the bytes it loads (so the identity names exactly
    /// what runs), loads the ONNX Runtime library on first use ([`RuntimeLocation`])
    /// and checks the graph's signature: token inputs named `input_ids` and optionally
    /// `attention_mask` and `token_type_ids` (int64 or int32), or a single string
    /// input; and a float output of the rank the pooling needs.
    pub fn load(
        model_path: &Path,
        tokenizer_path: Option<&Path>,
        options: EmbedOptions,
    ) -> Result<Embedder, EmbedError> {
        check_options(&options)?;
        let model_bytes = read(model_path)?;
        let model_blake3 = *blake3::hash(&model_bytes).as_bytes();
        let tokenizer = tokenizer_path.map(load_tokenizer).transpose()?;

        // Hashed before ONNX Runtime opens them by path (it cannot load a library from
        // memory): the identity names the bytes that were there when the model loaded.
        let mut operator_libraries = Vec::with_capacity(options.operator_libraries.len());
        for path in &options.operator_libraries {
            operator_libraries.push(*blake3::hash(&read(path)?).as_bytes());
        }

        let runtime = runtime::load(&options.runtime)?;
        let session = open_session(&runtime, model_path, &model_bytes, &options.operator_libraries)?;
        let (inputs, tokenizer_id) = graph_inputs(&session, model_path, tokenizer)?;
        let GraphOutput { name: output, token_level, dim } = graph_output(&session, model_path, &options, &inputs)?;

        let identity = ModelIdentity {
            name: options.name.clone(),
            model_blake3,
            tokenizer: tokenizer_id,
            dim,
            dtype: Dtype::F32,
            pooling: options.pooling,
            normalized: options.normalize,
            runtime_version: runtime.version.clone(),
            operator_libraries,
        };
        Ok(Embedder {
            session,
            inputs,
            output,
            token_level,
            identity,
            model_path: model_path.to_owned(),
            batch_size: options.batch_size,
            tokens_max: options.tokens_max,
            runtime,
        })
    }

    /// What the vectors are made with.
    pub fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    /// The vector dimension.
    pub fn dim(&self) -> usize {
        self.identity.dim as usize
    }

    /// The ONNX Runtime library file this embedder runs on.
    pub fn runtime_path(&self) -> &Path {
        &self.runtime.path
    }

    /// One vector per text, in the order of `texts`, in runs of
    /// [`EmbedOptions::batch_size`] texts.
    ///
    /// Fails on the first text that gives no token or too many, and on any vector
    /// holding a NaN or an infinity (or a zero vector that must be normalized); no
    /// vector is returned then.
    pub fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vector>, EmbedError> {
        if texts.len() > TEXTS_PER_CALL_MAX {
            return Err(EmbedError::TooManyTexts { n_texts: texts.len(), texts_max: TEXTS_PER_CALL_MAX });
        }
        let mut vectors = Vec::with_capacity(texts.len());
        for (batch_idx, batch) in texts.chunks(self.batch_size).enumerate() {
            let first = batch_idx * self.batch_size;
            // Precondition of a batch: the texts before it are answered.
            assert_eq!(vectors.len(), first, "a batch starts after the texts answered");
            self.run_batch(batch, first, &mut vectors)?;
        }
        // Postcondition: one vector per text, each of the model's dimension.
        assert!(
            vectors.len() == texts.len() && vectors.iter().all(|vector| vector.dim() == self.dim()),
            "embed answers each text with a vector of the model's dimension"
        );
        Ok(vectors)
    }

    /// The vector of one text.
    pub fn embed_one(&mut self, text: &str) -> Result<Vector, EmbedError> {
        let mut vectors = self.embed(&[text])?;
        Ok(vectors.remove(0))
    }

    fn run_batch(&mut self, batch: &[&str], first: usize, vectors: &mut Vec<Vector>) -> Result<(), EmbedError> {
        let end = first + batch.len();
        let run_error = |reason: String| EmbedError::Run { first, end, reason };
        // Per text: (token count, attention mask), for pooling.
        let mut masks: Vec<Vec<u32>> = Vec::with_capacity(batch.len());
        let mut values: Vec<(Cow<'static, str>, SessionInputValue<'static>)> = Vec::new();
        let n_texts = batch.len();
        let mut n_tokens_max = 0;
        match &self.inputs {
            Inputs::Strings { name } => {
                if let Some(offset) = batch.iter().position(|text| text.contains('\0')) {
                    return Err(EmbedError::Tokenize {
                        index: first + offset,
                        reason: "a graph that tokenizes takes C strings, which cannot hold a NUL character".to_owned(),
                    });
                }
                let texts: Vec<String> = batch.iter().map(|text| (*text).to_owned()).collect();
                let tensor = Tensor::from_string_array((vec![n_texts as i64], texts.as_slice()))
                    .map_err(|error| run_error(error.to_string()))?;
                values.push((Cow::Owned(name.clone()), tensor.into()));
            }
            Inputs::Tokens { tokenizer, inputs } => {
                let mut encodings = Vec::with_capacity(n_texts);
                for (offset, text) in batch.iter().enumerate() {
                    let index = first + offset;
                    let encoding = tokenizer
                        .encode(*text, true)
                        .map_err(|error| EmbedError::Tokenize { index, reason: error.to_string() })?;
                    let n_tokens = encoding.get_ids().len();
                    if n_tokens == 0 {
                        return Err(EmbedError::NoTokens { index });
                    }
                    if n_tokens > self.tokens_max {
                        return Err(EmbedError::TooManyTokens { index, n_tokens, tokens_max: self.tokens_max });
                    }
                    n_tokens_max = n_tokens_max.max(n_tokens);
                    masks.push(encoding.get_attention_mask().to_vec());
                    encodings.push(encoding);
                }
                for (name, field, int_type) in inputs {
                    // Padding: id 0, mask 0, type 0; the pooling below reads only
                    // positions whose mask is 1.
                    let mut flat: Vec<i64> = vec![0; n_texts * n_tokens_max];
                    for (text_idx, encoding) in encodings.iter().enumerate() {
                        let source = match field {
                            TokenField::Ids => encoding.get_ids(),
                            TokenField::Mask => encoding.get_attention_mask(),
                            TokenField::TypeIds => encoding.get_type_ids(),
                        };
                        for (token_idx, value) in source.iter().enumerate() {
                            flat[text_idx * n_tokens_max + token_idx] = i64::from(*value);
                        }
                    }
                    let shape = vec![n_texts as i64, n_tokens_max as i64];
                    let value: SessionInputValue<'static> = match int_type {
                        IntType::I64 => Tensor::from_array((shape, flat)).map(Into::into),
                        IntType::I32 => {
                            let mut narrow = Vec::with_capacity(flat.len());
                            for (position, value) in flat.iter().enumerate() {
                                let Ok(value) = i32::try_from(*value) else {
                                    return Err(EmbedError::Tokenize {
                                        index: first + position / n_tokens_max,
                                        reason: format!(
                                            "token value {value} does not fit the graph's int32 input {name}"
                                        ),
                                    });
                                };
                                narrow.push(value);
                            }
                            Tensor::from_array((shape, narrow)).map(Into::into)
                        }
                    }
                    .map_err(|error| run_error(error.to_string()))?;
                    values.push((Cow::Owned(name.clone()), value));
                }
            }
        }

        let dim = self.identity.dim as usize;
        let outputs = self.session.run(values).map_err(|error| run_error(error.to_string()))?;
        let output_error = |expected: String, found: String| EmbedError::Output {
            output: self.output.clone(),
            first,
            end,
            expected,
            found,
        };
        let value = outputs.get(&self.output).ok_or_else(|| output_error("present".into(), "missing".into()))?;
        let (shape, data) = value
            .try_extract_tensor::<f32>()
            .map_err(|error| output_error("a float32 tensor".into(), error.to_string()))?;
        let found = format!("{:?}", &shape[..]);
        let token_count = if self.token_level { n_tokens_max } else { 0 };
        let expected_shape: Vec<i64> = if self.token_level {
            vec![n_texts as i64, token_count as i64, dim as i64]
        } else {
            vec![n_texts as i64, dim as i64]
        };
        if shape[..] != expected_shape[..] || data.len() != expected_shape.iter().product::<i64>() as usize {
            return Err(output_error(format!("{expected_shape:?}"), found));
        }

        for text_idx in 0..n_texts {
            let index = first + text_idx;
            let mut vector = vec![0f32; dim];
            if !self.token_level {
                vector.copy_from_slice(&data[text_idx * dim..(text_idx + 1) * dim]);
            } else {
                let base = text_idx * token_count * dim;
                match self.identity.pooling {
                    Pooling::Cls => vector.copy_from_slice(&data[base..base + dim]),
                    _ => {
                        // Mean over the tokens whose mask is 1, summed in token order.
                        let mut n_counted = 0u32;
                        for (token_idx, mask) in masks[text_idx].iter().enumerate() {
                            if *mask == 0 {
                                continue;
                            }
                            n_counted += 1;
                            let row = &data[base + token_idx * dim..base + (token_idx + 1) * dim];
                            for (sum, value) in vector.iter_mut().zip(row) {
                                *sum += *value;
                            }
                        }
                        if n_counted == 0 {
                            return Err(EmbedError::NoTokens { index });
                        }
                        let count = n_counted as f32;
                        for component in &mut vector {
                            *component /= count;
                        }
                    }
                }
            }
            if vector.iter().any(|component| !component.is_finite()) {
                return Err(EmbedError::BadVector { index, what: "not finite" });
            }
            if self.identity.normalized && !crate::search::normalize_in_place(&mut vector) {
                return Err(EmbedError::BadVector { index, what: "zero and cannot be normalized" });
            }
            // Postcondition of a vector: the model's dimension.
            assert_eq!(vector.len(), dim, "a vector has the model's dimension");
            vectors.push(Vector::new(vector));
        }
        // Postcondition of a batch: one vector per text, in order.
        assert_eq!(vectors.len(), end, "a batch answers each of its texts");
        Ok(())
    }
}

/// A session builder for one sequential thread: one intra-op and one inter-op thread,
/// no parallel execution of nodes, no spinning, deterministic compute, and graph
/// rewrites that do not depend on the CPU's layout (level 2, not 3).
fn session_builder(runtime: &Runtime) -> Result<SessionBuilder, String> {
    let builder = Session::builder(&runtime.environment).map_err(|error| error.to_string())?;
    let builder = builder.with_optimization_level(GraphOptimizationLevel::Level2).map_err(|error| error.to_string())?;
    let builder = builder.with_intra_threads(1).map_err(|error| error.to_string())?;
    let builder = builder.with_inter_threads(1).map_err(|error| error.to_string())?;
    let builder = builder.with_parallel_execution(false).map_err(|error| error.to_string())?;
    let builder = builder.with_intra_op_spinning(false).map_err(|error| error.to_string())?;
    builder.with_deterministic_compute(true).map_err(|error| error.to_string())
}

fn check_options(options: &EmbedOptions) -> Result<(), EmbedError> {
    let bad = |reason: String| Err(EmbedError::Options { reason });
    if options.name.is_empty() || options.name.len() > IDENTITY_TEXT_BYTES_MAX {
        return bad(format!("the model name must be 1 to {IDENTITY_TEXT_BYTES_MAX} bytes, not {}", options.name.len()));
    }
    if options.batch_size == 0 || options.batch_size > BATCH_SIZE_MAX {
        return bad(format!("batch size {} is not in 1..={BATCH_SIZE_MAX}", options.batch_size));
    }
    if options.tokens_max == 0 || options.tokens_max > TOKENS_MAX_LIMIT {
        return bad(format!("tokens_max {} is not in 1..={TOKENS_MAX_LIMIT}", options.tokens_max));
    }
    if let Some(dim) = options.dim {
        if dim == 0 || dim > DIM_MAX {
            return bad(format!("dim {dim} is not in 1..={DIM_MAX}"));
        }
    }
    if options.operator_libraries.len() > OPERATOR_LIBRARIES_MAX {
        return bad(format!(
            "{} operator libraries, more than the limit of {OPERATOR_LIBRARIES_MAX}",
            options.operator_libraries.len()
        ));
    }
    Ok(())
}
