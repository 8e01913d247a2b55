//! `dedupe`: pairs of terms whose vectors say they are probably the same entity,
//! proposed for a reviewer's verdict.

use std::collections::BTreeMap;

use book::{Book, WriteOptions, Written};
use embed::{Matrix, QUERIES_PER_CALL_MAX};
use ledger_model::*;

use crate::error::SuggestError;
use crate::evidence::single;
use crate::model::Model;
use crate::vectors::{self, Role};

/// Neighbours looked at per text: room for the other texts of its own term.
const NEIGHBOURS: usize = 8;
/// The most pairs one run proposes (the best ones); the rest are counted.
pub const DEDUPE_PAIRS_MAX: usize = 10_000;

/// Which texts are compared with which: source surfaces with source surfaces,
/// renderings with renderings, notes with notes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Surface,
    Dst,
    Note,
}

fn class(role: Role) -> Class {
    match role {
        Role::Src | Role::Alias => Class::Surface,
        Role::Dst => Class::Dst,
        Role::Note => Class::Note,
    }
}

/// One pair of terms that are probably the same entity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    /// The term with the lower id.
    pub first: RecordId,
    /// The other.
    pub second: RecordId,
    /// The best score over their texts of one class, in millionths of a cosine.
    pub score: i32,
    /// The text of `first` that scored it.
    pub first_text: (Role, String),
    /// The text of `second` that scored it.
    pub second_text: (Role, String),
    /// The candidate proposed for the pair (or the one already judged).
    pub candidate: Option<RecordId>,
}

/// What [`dedupe`] found and proposed.
#[derive(Debug)]
pub struct Deduped {
    /// Active terms compared.
    pub n_terms: usize,
    /// The lowest score proposed.
    pub min_score: i32,
    /// Pairs at or over it, best first (then by ids), at most [`DEDUPE_PAIRS_MAX`].
    pub pairs: Vec<Pair>,
    /// Pairs over the minimum left out by [`DEDUPE_PAIRS_MAX`].
    pub n_over_limit: usize,
    /// Candidates proposed or updated (written unless a dry run).
    pub proposed: Vec<CandidateProposed>,
    /// The write, if anything was written.
    pub written: Option<Written>,
}

/// Whether two terms are apart by design: one supersedes the other (the same entity
/// later in the story), both name a sense and the senses differ, or they share their
/// source and differ in sense (one naming none: a homonym the book told apart, which
/// is what a sense is for).
fn apart(a: &TermPut, b: &TermPut) -> bool {
    a.supersedes == Some(b.id)
        || b.supersedes == Some(a.id)
        || matches!((&a.sense, &b.sense), (Some(x), Some(y)) if x != y)
        || (a.src == b.src && a.sense != b.sense)
}

/// Compares every active term with every other by their vectors (source surfaces
/// with source surfaces, renderings with renderings, notes with notes; brute force,
/// each text's nearest [`NEIGHBOURS`]) and proposes, unless `dry_run`, each pair
/// scoring at least `min_score` (the book's
/// [`EmbeddingModelSet::dedupe_min_score`] when `None`) as a candidate with `origin:
/// embedding`, `trust: low`, the score, the lower id as `related` and the other as
/// `duplicate` (its source as the surface). Terms that supersede one another, name
/// different senses, or share a source under different senses are apart by design
/// and never paired. A pair already
/// proposed keeps its candidate (updated when its score or texts changed, left alone
/// when judged); running again changes nothing.
///
/// Needs fresh vectors of every active term ([`crate::refresh`]). The actor, unless
/// one is named, is [`crate::DEFAULT_ACTOR`]; the source, unless one is given,
/// `dedupe`.
pub fn dedupe(
    book: &mut Book,
    model: &mut Model,
    min_score: Option<i32>,
    dry_run: bool,
    write: &WriteOptions,
) -> Result<Deduped, SuggestError> {
    let state = book.state(None)?;
    let (set, terms) = vectors::book_terms(&state)?;
    model.check(&set)?;
    let min_score = crate::model::min_score(min_score, set.dedupe_min_score)?;
    let stored = vectors::load_all(book, &set, &terms)?;
    let dim = set.dim as usize;
    let bad = |error: embed::SearchError| SuggestError::Invalid(format!("stored vectors: {error}"));
    // Rows by class, in term id order: (term index, text index).
    let mut matrices: BTreeMap<Class, (Matrix, Vec<(usize, usize)>)> = BTreeMap::new();
    for (term_idx, term) in terms.iter().enumerate() {
        for (index, row) in &stored[&term.id].rows {
            let text_idx = usize::from(*index);
            let entry = match matrices.entry(class(term.texts[text_idx].0)) {
                std::collections::btree_map::Entry::Occupied(entry) => entry.into_mut(),
                std::collections::btree_map::Entry::Vacant(entry) => {
                    entry.insert((Matrix::new(dim).map_err(bad)?, Vec::new()))
                }
            };
            entry.0.push(row).map_err(bad)?;
            entry.1.push((term_idx, text_idx));
        }
    }
    // The best (score, texts) of every pair of term indexes, lower index first; a
    // text is (term index, text index).
    type Text = (usize, usize);
    let mut best: BTreeMap<(usize, usize), (i32, Text, Text)> = BTreeMap::new();
    for (matrix, rows) in matrices.values() {
        for (chunk_idx, chunk) in rows.chunks(QUERIES_PER_CALL_MAX).enumerate() {
            let first_row = chunk_idx * QUERIES_PER_CALL_MAX;
            let queries: Vec<&[f32]> = (first_row..first_row + chunk.len())
                .map(|row_idx| matrix.row(row_idx).expect("a row of the matrix"))
                .collect();
            for (offset, neighbours) in matrix.search(&queries, NEIGHBOURS).map_err(bad)?.into_iter().enumerate() {
                let (a, a_text) = rows[first_row + offset];
                for neighbour in neighbours {
                    let (b, b_text) = rows[neighbour.index as usize];
                    if a == b || apart(&state.terms()[&terms[a].id].put, &state.terms()[&terms[b].id].put) {
                        continue;
                    }
                    let score = neighbour.score.millionths();
                    let (key, texts) =
                        if a < b { ((a, b), ((a, a_text), (b, b_text))) } else { ((b, a), ((b, b_text), (a, a_text))) };
                    let entry = best.entry(key).or_insert((score, texts.0, texts.1));
                    // The best score; on a tie the first texts in order.
                    if (score, std::cmp::Reverse((texts.0, texts.1))) > (entry.0, std::cmp::Reverse((entry.1, entry.2)))
                    {
                        *entry = (score, texts.0, texts.1);
                    }
                }
            }
        }
    }
    let text_of = |(term_idx, text_idx): (usize, usize)| terms[term_idx].texts[text_idx].clone();
    let mut pairs: Vec<Pair> = best
        .into_iter()
        .filter(|(_, (score, _, _))| *score >= min_score)
        .map(|((a, b), (score, a_text, b_text))| Pair {
            first: terms[a].id,
            second: terms[b].id,
            score,
            first_text: text_of(a_text),
            second_text: text_of(b_text),
            candidate: None,
        })
        .collect();
    pairs.sort_by_key(|pair| (std::cmp::Reverse(pair.score), pair.first, pair.second));
    let n_over_limit = pairs.len().saturating_sub(DEDUPE_PAIRS_MAX);
    pairs.truncate(DEDUPE_PAIRS_MAX);

    // Candidates of the embedding tier by pair, open or judged.
    let mut by_pair: BTreeMap<(RecordId, RecordId), (CandidateProposed, bool)> = BTreeMap::new();
    for candidate in state.candidates().values() {
        let proposed = &candidate.proposed;
        if let (Origin::Embedding, Some(related), Some(duplicate)) =
            (proposed.origin, proposed.related, proposed.duplicate)
        {
            by_pair.entry((related, duplicate)).or_insert_with(|| (proposed.clone(), candidate.verdict.is_some()));
        }
    }
    let mut free = state.free_ids(RecordKind::Candidate);
    let mut proposed = Vec::new();
    for pair in &mut pairs {
        let line = format!(
            "{} {} {} ~ {} {} {} {}",
            pair.first,
            pair.first_text.0.as_str(),
            pair.first_text.1,
            pair.second,
            pair.second_text.0.as_str(),
            pair.second_text.1,
            embed::Score::from_millionths(pair.score)
        );
        let surface = state.terms()[&pair.second].put.src.clone();
        let existing = by_pair.get(&(pair.first, pair.second));
        // Only a pair without a candidate takes a new id.
        let id = match existing {
            Some((existing, _)) => existing.id,
            None => free.take().map_err(book::BookError::from)?,
        };
        let fresh = CandidateProposed {
            evidence: Some(single(&line)),
            score: Some(pair.score),
            related: Some(pair.first),
            duplicate: Some(pair.second),
            ..CandidateProposed::new(id, surface, Origin::Embedding)
        };
        match existing {
            Some((existing, judged)) => {
                pair.candidate = Some(existing.id);
                if !judged && fresh != *existing {
                    proposed.push(fresh);
                }
            }
            None => {
                pair.candidate = Some(fresh.id);
                proposed.push(fresh);
            }
        }
    }
    // The write changes the head in place once nothing here holds it.
    drop(state);
    let written = book.propose(&write.acting_as(crate::DEFAULT_ACTOR), &proposed, "dedupe", dry_run)?;
    Ok(Deduped { n_terms: terms.len(), min_score, pairs, n_over_limit, proposed, written })
}
