//! Model identity: what a vector was made with, as a fixed byte form and its id.
//!
//! The byte form holds no floats and no maps, and every field has one encoding, so
//! equal identities have equal bytes and equal ids on every machine. A book stores the
//! identity as configuration beside its vectors; a vector whose identity id is not the
//! current model's is stale.

use std::fmt;

/// The version of [`ModelIdentity::to_bytes`] for an identity without operator
/// libraries: the first byte of the encoding.
pub const IDENTITY_FORMAT: u8 = 1;

/// The version of [`ModelIdentity::to_bytes`] for an identity with operator libraries:
/// format 1 followed by their hashes. An identity without any is always written as
/// format 1, so the ids of such identities are those format 1 gave them.
pub const IDENTITY_FORMAT_OPERATORS: u8 = 2;

/// The blake3 derive-key context of [`ModelIdentity::id`]; no other object is hashed
/// under it, so an identity id can never equal the hash of anything else.
pub const IDENTITY_CONTEXT: &str = "lorebank embed model identity v1";

/// The longest model name [`crate::EmbedOptions`] accepts, in bytes.
pub const IDENTITY_TEXT_BYTES_MAX: usize = 256;

/// How a token-level output becomes one vector per text.
///
/// A sentence-transformers model names its pooling in `1_Pooling/config.json`:
/// `pooling_mode_mean_tokens` is [`Pooling::Mean`], `pooling_mode_cls_token` is
/// [`Pooling::Cls`]. When unsure, pick [`Pooling::Mean`]: most multilingual sentence
/// models (multilingual-e5, paraphrase-multilingual, LaBSE is the exception) are
/// trained with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Pooling {
    /// The mean of the token vectors whose attention mask is 1, summed in token order.
    Mean,
    /// The vector of the first token (`[CLS]` or `<s>`).
    Cls,
    /// The graph pools: its output is already one vector per text (`[batch, dim]`).
    InGraph,
}

impl Pooling {
    /// The stable word for this pooling (`mean`, `cls`, `in-graph`).
    pub fn as_str(self) -> &'static str {
        match self {
            Pooling::Mean => "mean",
            Pooling::Cls => "cls",
            Pooling::InGraph => "in-graph",
        }
    }

    fn code(self) -> u8 {
        match self {
            Pooling::Mean => 1,
            Pooling::Cls => 2,
            Pooling::InGraph => 3,
        }
    }

    fn from_code(code: u8) -> Option<Pooling> {
        match code {
            1 => Some(Pooling::Mean),
            2 => Some(Pooling::Cls),
            3 => Some(Pooling::InGraph),
            _ => None,
        }
    }
}

/// The element type of the graph output the vectors are read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Dtype {
    /// 32-bit IEEE 754 floats, the only output type the embedder reads.
    F32,
}

impl Dtype {
    /// The stable word for this type (`f32`).
    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
        }
    }

    fn code(self) -> u8 {
        match self {
            Dtype::F32 => 1,
        }
    }

    fn from_code(code: u8) -> Option<Dtype> {
        match code {
            1 => Some(Dtype::F32),
            _ => None,
        }
    }
}

/// Where the text is split into tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TokenizerId {
    /// A `tokenizer.json` read with the `tokenizers` crate: the blake3 of its bytes.
    File([u8; 32]),
    /// The graph takes strings and tokenizes them itself.
    InGraph,
}

impl fmt::Display for TokenizerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenizerId::File(hash) => f.write_str(&hex(hash)),
            TokenizerId::InGraph => f.write_str("in-graph"),
        }
    }
}

/// Everything that decides what vector a text gets: the model and tokenizer bytes,
/// the pipeline around them, and the ONNX Runtime that ran the graph.
///
/// Two embedders with equal identities give equal vectors for equal texts on the same
/// kind of CPU (see docs/embeddings.md for what is and is not promised across CPUs).
/// The batch size is not part of it: a batch size of 1, the default, is what makes a
/// vector independent of the texts embedded with it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModelIdentity {
    /// The name the caller gave the model (e.g. `multilingual-e5-small`), informational
    /// but covered by the id.
    pub name: String,
    /// blake3 of the ONNX model file's bytes.
    pub model_blake3: [u8; 32],
    /// The tokenizer: the blake3 of its `tokenizer.json`, or in the graph.
    pub tokenizer: TokenizerId,
    /// The number of components of every vector.
    pub dim: u32,
    /// The element type of the output the vectors are read from.
    pub dtype: Dtype,
    /// How token vectors become one vector per text.
    pub pooling: Pooling,
    /// Whether every vector is scaled to unit L2 norm.
    pub normalized: bool,
    /// The ONNX Runtime version that ran the graph (e.g. `1.31.1`), or `unknown` when
    /// the library does not say.
    pub runtime_version: String,
    /// blake3 of each custom-operator library registered on the session
    /// ([`crate::EmbedOptions::operator_library`]), in registration order; empty for a
    /// graph of standard operators. At most [`crate::OPERATOR_LIBRARIES_MAX`].
    pub operator_libraries: Vec<[u8; 32]>,
}

/// The id of a [`ModelIdentity`]: blake3 (derive-key [`IDENTITY_CONTEXT`]) of its bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModelIdentityId(pub [u8; 32]);

impl fmt::Display for ModelIdentityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex(&self.0))
    }
}

impl fmt::Debug for ModelIdentityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ModelIdentityId({self})")
    }
}

/// Why bytes are not a [`ModelIdentity`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// The bytes end before the field.
    #[error("model identity ends inside field {field} at byte {offset}")]
    Truncated {
        /// The field being read.
        field: &'static str,
        /// Where the bytes ended.
        offset: usize,
    },
    /// The first byte is not a known format version.
    #[error("model identity format {found} is unknown (known: {IDENTITY_FORMAT}, {IDENTITY_FORMAT_OPERATORS})")]
    UnknownFormat {
        /// The format byte found.
        found: u8,
    },
    /// A code byte names no known value.
    #[error("model identity field {field} has unknown code {code}")]
    UnknownCode {
        /// The field.
        field: &'static str,
        /// The code found.
        code: u8,
    },
    /// A text field is not UTF-8.
    #[error("model identity field {field} is not UTF-8 (length {len})")]
    BadText {
        /// The field.
        field: &'static str,
        /// Its declared length.
        len: u32,
    },
    /// Bytes follow the last field.
    #[error("model identity has {extra} bytes after its last field")]
    TrailingBytes {
        /// How many.
        extra: usize,
    },
    /// The dimension is zero.
    #[error("model identity dim is 0")]
    ZeroDim,
    /// Format 2 with no operator library (written as format 1), or more than the limit.
    #[error("model identity format 2 names {count} operator libraries, not 1 to {}", crate::OPERATOR_LIBRARIES_MAX)]
    OperatorCount {
        /// The count found.
        count: u8,
    },
}

impl ModelIdentity {
    /// The canonical bytes, in this order (integers little-endian, text as a `u32`
    /// length then UTF-8):
    ///
    /// | bytes | field |
    /// | --- | --- |
    /// | 1 | format, [`IDENTITY_FORMAT`] |
    /// | 4 + n | name |
    /// | 32 | model blake3 |
    /// | 1 (+ 32) | tokenizer: 0 in the graph; 1 then the `tokenizer.json` blake3 |
    /// | 4 | dim |
    /// | 1 | dtype: 1 f32 |
    /// | 1 | pooling: 1 mean, 2 cls, 3 in-graph |
    /// | 1 | normalized: 0 or 1 |
    /// | 4 + n | runtime version |
    ///
    /// With operator libraries the first byte is [`IDENTITY_FORMAT_OPERATORS`] and the
    /// fields above are followed by:
    ///
    /// | bytes | field |
    /// | --- | --- |
    /// | 1 | the number of operator libraries, 1 to [`crate::OPERATOR_LIBRARIES_MAX`] |
    /// | 32 each | their blake3, in registration order |
    ///
    /// # Panics
    ///
    /// When the name or the runtime version is 4 GiB or longer, or there are more than
    /// 255 operator libraries; an identity made by [`crate::Embedder::load`] has a name
    /// of at most [`IDENTITY_TEXT_BYTES_MAX`] bytes and at most
    /// [`crate::OPERATOR_LIBRARIES_MAX`] libraries.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(160 + self.name.len() + self.runtime_version.len());
        out.push(if self.operator_libraries.is_empty() { IDENTITY_FORMAT } else { IDENTITY_FORMAT_OPERATORS });
        put_text(&mut out, &self.name);
        out.extend_from_slice(&self.model_blake3);
        match &self.tokenizer {
            TokenizerId::InGraph => out.push(0),
            TokenizerId::File(hash) => {
                out.push(1);
                out.extend_from_slice(hash);
            }
        }
        out.extend_from_slice(&self.dim.to_le_bytes());
        out.push(self.dtype.code());
        out.push(self.pooling.code());
        out.push(u8::from(self.normalized));
        put_text(&mut out, &self.runtime_version);
        if !self.operator_libraries.is_empty() {
            out.push(u8::try_from(self.operator_libraries.len()).expect("at most 255 operator libraries"));
            for hash in &self.operator_libraries {
                out.extend_from_slice(hash);
            }
        }
        out
    }

    /// Reads the bytes [`ModelIdentity::to_bytes`] wrote. Strict: every byte must be
    /// one the encoder writes, so `from_bytes(b)?.to_bytes() == b`.
    pub fn from_bytes(bytes: &[u8]) -> Result<ModelIdentity, IdentityError> {
        let mut reader = Reader { bytes, offset: 0 };
        let format = reader.byte("format")?;
        if format != IDENTITY_FORMAT && format != IDENTITY_FORMAT_OPERATORS {
            return Err(IdentityError::UnknownFormat { found: format });
        }
        let name = reader.text("name")?;
        let model_blake3 = reader.hash("model_blake3")?;
        let tokenizer = match reader.byte("tokenizer")? {
            0 => TokenizerId::InGraph,
            1 => TokenizerId::File(reader.hash("tokenizer_blake3")?),
            code => return Err(IdentityError::UnknownCode { field: "tokenizer", code }),
        };
        let dim = reader.u32("dim")?;
        if dim == 0 {
            return Err(IdentityError::ZeroDim);
        }
        let code = reader.byte("dtype")?;
        let dtype = Dtype::from_code(code).ok_or(IdentityError::UnknownCode { field: "dtype", code })?;
        let code = reader.byte("pooling")?;
        let pooling = Pooling::from_code(code).ok_or(IdentityError::UnknownCode { field: "pooling", code })?;
        let normalized = match reader.byte("normalized")? {
            0 => false,
            1 => true,
            code => return Err(IdentityError::UnknownCode { field: "normalized", code }),
        };
        let runtime_version = reader.text("runtime_version")?;
        let mut operator_libraries = Vec::new();
        if format == IDENTITY_FORMAT_OPERATORS {
            let count = reader.byte("operator_libraries")?;
            if count == 0 || usize::from(count) > crate::OPERATOR_LIBRARIES_MAX {
                return Err(IdentityError::OperatorCount { count });
            }
            for _ in 0..count {
                operator_libraries.push(reader.hash("operator_library_blake3")?);
            }
        }
        let extra = bytes.len() - reader.offset;
        if extra != 0 {
            return Err(IdentityError::TrailingBytes { extra });
        }
        Ok(ModelIdentity {
            name,
            model_blake3,
            tokenizer,
            dim,
            dtype,
            pooling,
            normalized,
            runtime_version,
            operator_libraries,
        })
    }

    /// The id: blake3 in derive-key mode ([`IDENTITY_CONTEXT`]) of
    /// [`ModelIdentity::to_bytes`].
    pub fn id(&self) -> ModelIdentityId {
        ModelIdentityId(blake3::derive_key(IDENTITY_CONTEXT, &self.to_bytes()))
    }
}

impl fmt::Display for ModelIdentity {
    /// One line of stable words: `name model=<hex> tokenizer=<hex|in-graph> dim=384
    /// dtype=f32 pooling=mean normalized=true runtime=1.31.1`, then ` operators=<hex>`
    /// (comma-separated) when the identity names operator libraries.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} model={} tokenizer={} dim={} dtype={} pooling={} normalized={} runtime={}",
            self.name,
            hex(&self.model_blake3),
            self.tokenizer,
            self.dim,
            self.dtype.as_str(),
            self.pooling.as_str(),
            self.normalized,
            self.runtime_version
        )?;
        if !self.operator_libraries.is_empty() {
            let hashes: Vec<String> = self.operator_libraries.iter().map(|hash| hex(hash)).collect();
            write!(f, " operators={}", hashes.join(","))?;
        }
        Ok(())
    }
}

/// Lowercase hex of bytes.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn put_text(out: &mut Vec<u8>, text: &str) {
    let len = u32::try_from(text.len()).expect("an identity text under 4 GiB");
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

struct Reader<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl Reader<'_> {
    fn take(&mut self, field: &'static str, n: usize) -> Result<&[u8], IdentityError> {
        let end = self.offset.checked_add(n).filter(|end| *end <= self.bytes.len());
        let end = end.ok_or(IdentityError::Truncated { field, offset: self.bytes.len() })?;
        let slice = &self.bytes[self.offset..end];
        self.offset = end;
        Ok(slice)
    }

    fn byte(&mut self, field: &'static str) -> Result<u8, IdentityError> {
        Ok(self.take(field, 1)?[0])
    }

    fn u32(&mut self, field: &'static str) -> Result<u32, IdentityError> {
        let bytes = self.take(field, 4)?;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    fn hash(&mut self, field: &'static str) -> Result<[u8; 32], IdentityError> {
        let mut hash = [0; 32];
        hash.copy_from_slice(self.take(field, 32)?);
        Ok(hash)
    }

    fn text(&mut self, field: &'static str) -> Result<String, IdentityError> {
        let len = self.u32(field)?;
        let bytes = self.take(field, len as usize)?;
        std::str::from_utf8(bytes).map(str::to_owned).map_err(|_| IdentityError::BadText { field, len })
    }
}
