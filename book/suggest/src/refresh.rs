//! `refresh`: recompute the vectors the book lacks under its model, and drop the
//! stale ones.

use std::collections::BTreeSet;

use book::{Book, BookError};
use embed::EmbedError;
use ledger_model::*;

use crate::error::SuggestError;
use crate::model::Model;
use crate::vectors::{self, Role, TermVectors, VECTORS_SET};

/// Terms embedded between two filings (one durable commit each): a refresh that
/// stops part way keeps what it filed.
pub const REFRESH_TERMS_PER_COMMIT: usize = 1_000;

/// A text the model could not take, so its term has no vector for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The term.
    pub id: RecordId,
    /// Which text.
    pub role: Role,
    /// Why (more tokens than the model reads).
    pub reason: String,
}

/// What a refresh did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refreshed {
    /// Active terms.
    pub n_terms: usize,
    /// Terms whose vectors were already there and kept.
    pub n_kept: usize,
    /// Terms embedded now.
    pub n_embedded: usize,
    /// Texts embedded now.
    pub n_texts: usize,
    /// Texts the model could not take.
    pub skipped: Vec<Skipped>,
    /// Stale entries dropped (another model's, or of texts since changed).
    pub n_dropped: usize,
}

/// Embeds every active term of the book at its head whose current texts have no
/// vectors under the book's model (every term with `all`), files the vectors in the
/// ledger's derived set, and drops every entry no active term's current version
/// names. Calls `progress` with (terms done, terms to embed). Writes no event.
///
/// `model` must be the book's model ([`Model::for_book`]). A text with more tokens
/// than the model reads gets no vector (listed in [`Refreshed::skipped`]); any other
/// embedding failure stops the refresh, keeping what was filed before it.
pub fn refresh(
    book: &mut Book,
    model: &mut Model,
    all: bool,
    mut progress: impl FnMut(u64, u64),
) -> Result<Refreshed, SuggestError> {
    let state = book.state(None)?;
    let (set, terms) = vectors::book_terms(&state)?;
    model.check(&set)?;
    let stored: BTreeSet<Vec<u8>> =
        book.ledger().derived_keys(VECTORS_SET).map_err(BookError::from)?.into_iter().collect();
    // An entry under the current key that does not decode is rewritten.
    let fresh = if all { Default::default() } else { vectors::load(book, model.vectors_key(), set.dim, &terms)? };
    let todo: Vec<&vectors::Versioned> = terms.iter().filter(|term| !fresh.contains_key(&term.id)).collect();
    let total = todo.len() as u64;
    progress(0, total);
    let mut out = Refreshed {
        n_terms: terms.len(),
        n_kept: terms.len() - todo.len(),
        n_embedded: 0,
        n_texts: 0,
        skipped: Vec::new(),
        n_dropped: 0,
    };
    for (chunk_idx, chunk) in todo.chunks(REFRESH_TERMS_PER_COMMIT).enumerate() {
        let mut put = Vec::with_capacity(chunk.len());
        for term in chunk {
            let mut rows = Vec::with_capacity(term.texts.len());
            for (index, (role, text)) in term.texts.iter().enumerate() {
                match model.embed(&[text.as_str()]) {
                    Ok(mut vectors) => {
                        rows.push((index as u16, vectors.remove(0).into_vec()));
                        out.n_texts += 1;
                    }
                    Err(SuggestError::Embed(
                        error @ (EmbedError::TooManyTokens { .. } | EmbedError::NoTokens { .. }),
                    )) => out.skipped.push(Skipped { id: term.id, role: *role, reason: error.to_string() }),
                    Err(other) => return Err(other),
                }
            }
            let vectors = TermVectors { id: term.id, rows };
            put.push((term.key.clone(), vectors::encode(&vectors, set.dim)));
        }
        book.ledger().derived_write(VECTORS_SET, &put, &[]).map_err(BookError::from)?;
        out.n_embedded += chunk.len();
        progress(((chunk_idx * REFRESH_TERMS_PER_COMMIT) + chunk.len()) as u64, total);
    }
    let current: BTreeSet<&[u8]> = terms.iter().map(|term| term.key.as_slice()).collect();
    let stale: Vec<Vec<u8>> = stored.into_iter().filter(|key| !current.contains(key.as_slice())).collect();
    out.n_dropped = stale.len();
    for chunk in stale.chunks(REFRESH_TERMS_PER_COMMIT * 10) {
        book.ledger().derived_write(VECTORS_SET, &[], chunk).map_err(BookError::from)?;
    }
    Ok(out)
}
