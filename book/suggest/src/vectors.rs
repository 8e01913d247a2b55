//! The vectors of a book: derived data in the ledger's derived set
//! [`VECTORS_SET`], one entry per term version and model.
//!
//! A term's *texts* are its source surface, its alias surfaces (in surface order), its
//! rendering and its note, each with its role. Its *version* is the keyed blake3
//! ([`VERSION_CONTEXT`]) of its id and texts, so a put that changes none of them (a
//! new gender, a window) keeps the vectors, and a rollback that brings a text back
//! finds them again. An entry is keyed by `model id (32) ‖ version (32)` and holds:
//!
//! | bytes | field |
//! | --- | --- |
//! | 1 | format, [`VECTORS_FORMAT`] |
//! | 1 + n | the term id as text, its length first |
//! | 4 | dim, `u32` LE |
//! | 2 | number of rows, `u16` LE |
//! | per row: 2 + 4 × dim | the index of the text it embeds (`u16` LE), then the vector, `f32` LE |
//!
//! Rows follow the texts in order; a text the model cannot take (more tokens than it
//! reads) has no row. The ledger checks each entry's checksum; [`decode`] refuses
//! anything else that is not what [`encode`] writes, and such an entry is treated as
//! missing. Nothing in the log or a snapshot refers to a vector.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use book::Book;
use ledger_model::*;
use projections::State;

use crate::error::SuggestError;
use crate::model::{book_model, model_id};

/// The ledger's derived set the vectors are filed in.
pub const VECTORS_SET: &str = "embedding-vectors v1";
/// The layout of an entry (the table above).
pub const VECTORS_FORMAT: u8 = 1;
/// blake3 `derive_key` context of a term version.
pub const VERSION_CONTEXT: &str = "lorebank 2026-12-02 embedding texts v1";
/// blake3 `derive_key` context of a model key.
pub const MODEL_KEY_CONTEXT: &str = "lorebank 2026-12-02 embedding vectors model v1";

/// The model part of the keys of `set`'s vectors: the keyed blake3
/// ([`MODEL_KEY_CONTEXT`]) of the model identity id and the graph output the vectors
/// are read from, which the identity does not name (two outputs of one graph give
/// other vectors under one identity).
pub fn model_key(set: &EmbeddingModelSet) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new_derive_key(MODEL_KEY_CONTEXT);
    hasher.update(&model_id(set).0);
    match &set.output {
        None => hasher.update(&[0]),
        Some(output) => hasher.update(&[1]).update(&(output.len() as u32).to_le_bytes()).update(output.as_bytes()),
    };
    *hasher.finalize().as_bytes()
}

/// What a text of a term is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// The source surface.
    Src,
    /// An alias surface.
    Alias,
    /// The rendering.
    Dst,
    /// The note.
    Note,
}

impl Role {
    /// The word for it: `src`, `alias`, `dst`, `note`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Src => "src",
            Role::Alias => "alias",
            Role::Dst => "dst",
            Role::Note => "note",
        }
    }

    fn code(self) -> u8 {
        match self {
            Role::Src => 1,
            Role::Alias => 2,
            Role::Dst => 3,
            Role::Note => 4,
        }
    }

    /// Source surfaces (the source and the aliases): what a span of source text is
    /// compared with.
    pub fn is_surface(self) -> bool {
        matches!(self, Role::Src | Role::Alias)
    }
}

/// The texts of a term, in order.
pub fn texts(term: &projections::Term) -> Vec<(Role, String)> {
    let mut texts = vec![(Role::Src, term.put.src.clone())];
    texts.extend(term.aliases.keys().map(|surface| (Role::Alias, surface.clone())));
    texts.push((Role::Dst, term.put.dst.clone()));
    if let Some(note) = &term.put.note {
        texts.push((Role::Note, note.clone()));
    }
    texts
}

/// The version of a term's texts.
pub fn version(id: RecordId, texts: &[(Role, String)]) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new_derive_key(VERSION_CONTEXT);
    let id = id.to_string();
    hasher.update(&(id.len() as u32).to_le_bytes());
    hasher.update(id.as_bytes());
    for (role, text) in texts {
        hasher.update(&[role.code()]);
        hasher.update(&(text.len() as u32).to_le_bytes());
        hasher.update(text.as_bytes());
    }
    *hasher.finalize().as_bytes()
}

/// The key of a term version's vectors under a model.
pub fn key(model: [u8; 32], version: &[u8; 32]) -> Vec<u8> {
    let mut key = Vec::with_capacity(64);
    key.extend_from_slice(&model);
    key.extend_from_slice(version);
    key
}

/// The vectors of one term version: (index of the text, vector), in text order.
#[derive(Clone, Debug, PartialEq)]
pub struct TermVectors {
    /// The term.
    pub id: RecordId,
    /// The rows.
    pub rows: Vec<(u16, Vec<f32>)>,
}

/// The bytes of an entry (the table in the module doc).
pub fn encode(vectors: &TermVectors, dim: u32) -> Vec<u8> {
    let id = vectors.id.to_string();
    let mut out = Vec::with_capacity(8 + id.len() + vectors.rows.len() * (2 + 4 * dim as usize));
    out.push(VECTORS_FORMAT);
    out.push(id.len() as u8);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(&dim.to_le_bytes());
    out.extend_from_slice(&(vectors.rows.len() as u16).to_le_bytes());
    for (index, row) in &vectors.rows {
        out.extend_from_slice(&index.to_le_bytes());
        for component in row {
            out.extend_from_slice(&component.to_le_bytes());
        }
    }
    out
}

/// Reads an entry strictly: the format, a term id, the dim `dim`, at most `n_texts`
/// rows with ascending text indexes below `n_texts`, finite components, nothing
/// after. `None` for anything else.
pub fn decode(bytes: &[u8], dim: u32, n_texts: usize) -> Option<TermVectors> {
    let (&format, rest) = bytes.split_first()?;
    if format != VECTORS_FORMAT {
        return None;
    }
    let (&id_len, rest) = rest.split_first()?;
    let (id, rest) = rest.split_at_checked(usize::from(id_len))?;
    let id: RecordId = std::str::from_utf8(id).ok()?.parse().ok()?;
    let (stored_dim, rest) = rest.split_at_checked(4)?;
    if u32::from_le_bytes(stored_dim.try_into().ok()?) != dim {
        return None;
    }
    let (n_rows, mut rest) = rest.split_at_checked(2)?;
    let n_rows = usize::from(u16::from_le_bytes(n_rows.try_into().ok()?));
    let row_bytes = 2 + 4 * dim as usize;
    if n_rows > n_texts || rest.len() != n_rows * row_bytes {
        return None;
    }
    let mut rows = Vec::with_capacity(n_rows);
    for _ in 0..n_rows {
        let (row, next) = rest.split_at(row_bytes);
        rest = next;
        let index = u16::from_le_bytes([row[0], row[1]]);
        if usize::from(index) >= n_texts || rows.last().is_some_and(|(last, _)| *last >= index) {
            return None;
        }
        let components: Vec<f32> = row[2..]
            .chunks_exact(4)
            .map(|bytes| f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
            .collect();
        if components.iter().any(|component| !component.is_finite()) {
            return None;
        }
        rows.push((index, components));
    }
    Some(TermVectors { id, rows })
}

/// One active term as the vectors see it.
pub(crate) struct Versioned {
    pub(crate) id: RecordId,
    pub(crate) texts: Vec<(Role, String)>,
    pub(crate) key: Vec<u8>,
}

/// Every active term of `state` with its texts and key under `model`, by id.
pub(crate) fn versioned(state: &State, model: [u8; 32]) -> Vec<Versioned> {
    state
        .terms()
        .iter()
        .filter(|(_, term)| !term.retired)
        .map(|(id, term)| {
            let texts = texts(term);
            let key = key(model, &version(*id, &texts));
            Versioned { id: *id, texts, key }
        })
        .collect()
}

/// How the book's vectors stand against its head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VectorStatus {
    /// The book's embedding model, if it has one.
    pub model: Option<EmbeddingModelSet>,
    /// Its identity id.
    pub model_id: Option<embed::ModelIdentityId>,
    /// Active terms.
    pub n_terms: usize,
    /// Active terms whose current texts have vectors under the book's model.
    pub n_fresh: usize,
    /// Active terms without (never refreshed, or changed since).
    pub n_missing: usize,
    /// Entries of the set that no active term's current version under the book's
    /// model names: of another model or of texts since changed. `refresh` drops them.
    pub n_stale: usize,
    /// Entries of the set.
    pub n_entries: u64,
    /// Bytes of the set (keys, values and checksums).
    pub n_bytes: u64,
}

/// How the book's vectors stand, read from the keys alone (no model is needed).
pub fn status(book: &mut Book) -> Result<VectorStatus, SuggestError> {
    let state = book.state(None)?;
    let keys: BTreeSet<Vec<u8>> =
        book.ledger().derived_keys(VECTORS_SET).map_err(book::BookError::from)?.into_iter().collect();
    let sets = book.ledger().derived_sets().map_err(book::BookError::from)?;
    let (n_entries, n_bytes) =
        sets.iter().find(|set| set.name == VECTORS_SET).map_or((0, 0), |set| (set.n_entries, set.n_bytes));
    let n_terms = state.terms().values().filter(|term| !term.retired).count();
    let Some((set, _)) = state.embedding_model() else {
        return Ok(VectorStatus {
            model: None,
            model_id: None,
            n_terms,
            n_fresh: 0,
            n_missing: n_terms,
            n_stale: keys.len(),
            n_entries,
            n_bytes,
        });
    };
    let id = model_id(set);
    let current: BTreeSet<Vec<u8>> = versioned(&state, model_key(set)).into_iter().map(|term| term.key).collect();
    let n_fresh = current.intersection(&keys).count();
    Ok(VectorStatus {
        model: Some(set.clone()),
        model_id: Some(id),
        n_terms,
        n_fresh,
        n_missing: n_terms - n_fresh,
        n_stale: keys.difference(&current).count(),
        n_entries,
        n_bytes,
    })
}

/// The fresh vectors of `terms` under the book's model, read in one pass over its
/// entries: by term id. An entry that does not decode is left out (it is missing, and
/// `refresh` rewrites it).
pub(crate) fn load(
    book: &Book,
    model: [u8; 32],
    dim: u32,
    terms: &[Versioned],
) -> Result<BTreeMap<RecordId, TermVectors>, SuggestError> {
    let wanted: BTreeMap<&[u8], &Versioned> = terms.iter().map(|term| (term.key.as_slice(), term)).collect();
    let mut found = BTreeMap::new();
    book.ledger()
        .derived_scan(VECTORS_SET, &model, |key, bytes| {
            if let Some(term) = wanted.get(key) {
                if let Some(vectors) = decode(bytes, dim, term.texts.len()).filter(|vectors| vectors.id == term.id) {
                    found.insert(term.id, vectors);
                }
            }
            ControlFlow::Continue(())
        })
        .map_err(book::BookError::from)?;
    Ok(found)
}

/// [`load`], refusing when any of `terms` has no fresh vectors.
pub(crate) fn load_all(
    book: &Book,
    set: &EmbeddingModelSet,
    terms: &[Versioned],
) -> Result<BTreeMap<RecordId, TermVectors>, SuggestError> {
    let found = load(book, model_key(set), set.dim, terms)?;
    let missing: Vec<RecordId> = terms.iter().map(|term| term.id).filter(|id| !found.contains_key(id)).collect();
    if let Some(first) = missing.first() {
        return Err(SuggestError::Stale { n_missing: missing.len(), n_terms: terms.len(), first: *first });
    }
    Ok(found)
}

/// The book's model and its active terms, versioned under it.
pub(crate) fn book_terms(state: &State) -> Result<(EmbeddingModelSet, Vec<Versioned>), SuggestError> {
    let set = book_model(state)?.clone();
    let terms = versioned(state, model_key(&set));
    Ok((set, terms))
}
